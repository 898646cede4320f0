package results

import "testing"

// disconnectedMutations are what a regression of the disconnected scenario
// looks like: each must show as a regression of exactly the aspects named.
func disconnectedMutations() []mutation {
	const disconnected = "disconnected"
	props := []string{"objects/cluster-version/properties"}
	return []mutation{
		{"capi-image-set-by-tag", disconnected, capiImageSetByTag, props},
		{"mapi-source-pulled", disconnected, mapiSourcePulled, props},
		{"capi-hosts-pulled-by-tag", disconnected, capiHostsPulledByTag, props},
		{"capi-no-tag-mirrors", disconnected, capiNoTagMirrors, props},
		{"mapi-tag-installed", disconnected, mapiTagInstalled, props},
	}
}

// The ACM-33187 bug back: the CAPI provider writes the ClusterImageSet by
// the tag it read on the hub.
func capiImageSetByTag(t *testing.T, m, c *Observation) {
	p := clusterVersionOf(t, c).Properties
	p["tag.outcome"] = "the release tag read on the hub; ClusterImageSet written by tag"
	p["day1.imageSet"] = "release 4.21.0 by tag in the mirror"
}

// A classic host or hub component reaching the source registry.
func mapiSourcePulled(t *testing.T, m, c *Observation) {
	clusterVersionOf(t, m).Properties["pulls.source"] = "3 requests"
}

// CAPI hosts pulling the release by tag: what the hosts pulled stays
// compared line for line.
func capiHostsPulledByTag(t *testing.T, m, c *Observation) {
	clusterVersionOf(t, c).Properties["pulls.hosts"] = "edge-cache/release by digest 404; openshift/release by digest 200; openshift/release-images by tag 200"
}

// CAPOA's ImageTagMirrorSet missing: the entry explains CAPOA's manifests
// only in full.
func capiNoTagMirrors(t *testing.T, m, c *Observation) {
	clusterVersionOf(t, c).Properties["spoke.imageTagMirrorSets"] = "none"
}

// The classic tag sub-case installing instead of failing as upstream does.
func mapiTagInstalled(t *testing.T, m, c *Observation) {
	clusterVersionOf(t, m).Properties["tag.outcome"] = "AgentClusterInstall SpecSynced=True/SyncOK"
}
