// Package agentproviders runs the repository's Cluster API agent providers
// — the OpenShift assisted bootstrap provider and control-plane provider
// of providers/ — in process on the lab's hub, as two controllers
// Components: the same setup code the manager binaries call, with the
// CRDs and webhook configurations providers/config embeds, and a
// WebhooksReady probe that proves the hub's API server calls the
// providers' webhooks. NewAgent adds the agent infrastructure provider
// (providers/agent) the same way, for those that run it (the conformance
// suite); New leaves it out.
//
// The components need Cluster API's, hive's and the assisted-service CRDs,
// which other components install (lab/capi, the lab's infrastructure
// APIs).
//
// It must not import anything above lab.
package agentproviders
