package results

import (
	"testing"
	"time"
)

// upgradeMutations are what a regression of the upgrade scenario looks
// like: each must show as a regression of exactly the aspects named.
func upgradeMutations() []mutation {
	const upgrade = "upgrade"
	return []mutation{
		{"capi-update-replaced-machines", upgrade, capiUpdateReplacedMachines, []string{"objects/cluster-version/properties"}},
		{"capi-gated-update-refused", upgrade, capiGatedUpdateRefused, []string{"objects/cluster-version/properties"}},
		{"capi-missing-release-asked-for", upgrade, capiMissingReleaseAskedFor, []string{"objects/cluster-version/properties"}},
		{"mapi-image-set-moved", upgrade, mapiImageSetMoved, []string{"objects/cluster-image-set/properties"}},
		{"capi-update-unverified", upgrade, capiUpdateUnverified, []string{"objects/cluster-version/properties"}},
		{"mapi-admin-forced", upgrade, mapiAdminForced, []string{"objects/cluster-version/properties"}},
		{"capi-nodes-not-moved", upgrade, capiNodesNotMoved, []string{"objects/cluster-version/properties"}},
		{"mapi-day2-node-at-installed-release", upgrade, mapiDay2NodeAtInstalledRelease, []string{"objects/cluster-version/properties"}},
		{"capi-minor-update-late", upgrade, capiMinorUpdateLate, []string{"durations/minor-update-completed", "durations/total"}},
	}
}

func clusterVersionOf(t *testing.T, o *Observation) *Object {
	t.Helper()
	return findObject(t, o, "cluster-version", func(*Object) bool { return true })
}

// An in-place update that reprovisioned a Machine or host.
func capiUpdateReplacedMachines(t *testing.T, m, c *Observation) {
	clusterVersionOf(t, c).Properties["updates.machinesAndHostsKept"] = "1 gone"
}

// The CAPI request stopped by the Upgradeable gate as the classic one is:
// its refusal no longer pairs with a forced update that completed.
func capiGatedUpdateRefused(t *testing.T, m, c *Observation) {
	clusterVersionOf(t, c).Properties["d.outcome"] = "refused: ReleaseAccepted=False/PreconditionChecks"
}

// The CAPI control plane writing a release it could not read to the
// cluster, as the classic admin does.
func capiMissingReleaseAskedFor(t *testing.T, m, c *Observation) {
	clusterVersionOf(t, c).Properties["c.desiredUpdate"] = "image=a digest the registry does not have force=true"
}

// The classic ClusterImageSet following the cluster's release.
func mapiImageSetMoved(t *testing.T, m, c *Observation) {
	findObject(t, m, "cluster-image-set", func(*Object) bool { return true }).Properties["b.releaseImage"] = "release 4.22.0 by digest"
}

// A forced update recorded as not verified: history entries stay compared.
func capiUpdateUnverified(t *testing.T, m, c *Observation) {
	p := clusterVersionOf(t, c).Properties
	p["a.history[0]"] = `4.21.1 Completed verified=false acceptedRisks="" image=release 4.21.1 by digest, completion time set`
}

// The classic admin forcing the minor update as CAPOA does: the entry
// pairs each sub-case's request, so one matching line is not enough.
func mapiAdminForced(t *testing.T, m, c *Observation) {
	clusterVersionOf(t, m).Properties["b.desiredUpdate"] = "image=release 4.22.0 by digest force=true"
}

// A CAPI update that completed with a worker still on the old kubelet.
func capiNodesNotMoved(t *testing.T, m, c *Observation) {
	clusterVersionOf(t, c).Properties["a.nodes"] = "kubelets v1.34.4, v1.34.5 on the Ready nodes"
}

// The classic day-2 worker left at the kubelet of the release the
// ClusterImageSet names, not moved to the cluster's: the gated entry pairs
// the day-2 nodes lines, so a change there is not waved through.
func mapiDay2NodeAtInstalledRelease(t *testing.T, m, c *Observation) {
	clusterVersionOf(t, m).Properties["e.nodes"] = "kubelet v1.34.4 on every Ready node"
}

// The CAPI minor update reported complete a minute later than the poll
// interval explains.
func capiMinorUpdateLate(t *testing.T, m, c *Observation) {
	delay(t, c, "minor-update-completed", 90*time.Second)
}
