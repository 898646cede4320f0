// Package disconnected is the paired disconnected scenario: each flow
// installs a compact cluster from a release named in a source registry
// the site cannot reach, adds a day-2 worker and updates the cluster, all
// through the oc-mirror mirror of that source. The hub is configured as a
// disconnected hub is (AgentServiceConfig mirrorRegistryRef); the CAPI
// flow also names the mirror as CAPOA needs (the release-image-repository
// annotation and imageRegistryRef). Two sub-cases come first: with no
// mirror configured the install must fail with a reported cause, and a
// release named by tag must fail as upstream fails (ACM-33187).
package disconnected
