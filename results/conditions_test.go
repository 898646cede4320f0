package results

import "testing"

func TestConditionLineKeepsEachTypesFinalStatus(t *testing.T) {
	tr := func(pairs ...string) []ConditionTransition {
		var out []ConditionTransition
		for i := 0; i < len(pairs); i += 2 {
			out = append(out, ConditionTransition{Type: pairs[i], Status: pairs[i+1]})
		}
		return out
	}
	for _, tc := range []struct {
		name string
		in   []ConditionTransition
		want string
	}{
		{"interleaving of types does not matter",
			tr("Validated", "False", "Connected", "False", "Connected", "True", "Validated", "True"),
			"Connected=True, Validated=True"},
		{"seen first when already True or after a detour: the same",
			tr("Validated", "True", "Ready", "False", "Ready", "True", "Ready", "False", "Ready", "True"),
			"Ready=True, Validated=True"},
		{"ending worse than it started shows",
			tr("Ready", "True", "Ready", "False"),
			"Ready=False"},
	} {
		if got := conditionLine(tc.in); got != tc.want {
			t.Errorf("%s: got %q, want %q", tc.name, got, tc.want)
		}
	}
}

func TestScrubReplacesIDsDerivedFromTheClusterName(t *testing.T) {
	o := &Observation{Cluster: "site-a", Objects: []Object{{Name: "site-a-workers", UID: "u1"}}}
	s := newScrubber(o)
	for in, want := range map[string]string{
		"machine.openshift.io/cluster-api-cluster=site-a-x7f3q": "machine.openshift.io/cluster-api-cluster=<cluster>-<rand>",
		"site-a-workers": "<name>",
		"site-a":         "<cluster>",
		"site-b-x7f3q":   "site-b-x7f3q",
	} {
		if got := s.scrub(in); got != want {
			t.Errorf("scrub(%q) = %q, want %q", in, got, want)
		}
	}
}
