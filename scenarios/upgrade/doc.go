// Package upgrade is the paired OpenShift update scenario: on each flow's
// day-1 cluster, a GA update within a minor release, an update to the next
// minor release, a target the release registry does not have, an update
// while an operator reports Upgradeable=False, and a day-2 worker after
// the updates. The MAPI flow updates the way classic clusters do, through
// the spoke's ClusterVersion (what `oc adm upgrade --to-image` writes);
// the CAPI flow through OpenshiftAssistedControlPlane
// spec.distributionVersion, which our control-plane provider turns into the
// ClusterVersion's desiredUpdate. After each sub-case it records the
// ClusterVersion's request, newest history entry and conditions, the
// kubelet every Ready Node reports (nodes move to a release in place), and
// the release the flow's ClusterImageSet names.
package upgrade
