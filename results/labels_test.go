package results

import (
	"slices"
	"testing"
)

// An unprefixed label key made of a run's names (HyperShift's
// <infra-id>-<cluster>-<pool> selector label) is scrubbed like its value;
// a prefixed key is an API's and stays as it is, names or not.
func TestLabelKeysOfRunNamesAreScrubbed(t *testing.T) {
	s := scrubberKnowing(map[string]string{"hc1-bhdbt": phInfraID, "hc1": phCluster, "workers": phName})
	got := normalizeLabels(map[string]string{
		"hc1-bhdbt-hc1-workers":         "hc1-bhdbt-hc1-workers",
		"cluster.x-k8s.io/cluster-name": "hc1-bhdbt",
		"example.com/hc1-bhdbt-workers": "x",
	}, s)
	want := []string{
		"<infra-id>-<cluster>-<name>=<infra-id>-<cluster>-<name>",
		"cluster.x-k8s.io/cluster-name=<infra-id>",
		"example.com/hc1-bhdbt-workers=x",
	}
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("labels %q, want %q", got, want)
	}
}
