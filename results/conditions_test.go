package results

import (
	"testing"
	"time"
)

func TestConditionLineKeepsEachTypesFinalStatusAndReason(t *testing.T) {
	tr := func(triples ...string) []ConditionTransition {
		var out []ConditionTransition
		for i := 0; i < len(triples); i += 3 {
			out = append(out, ConditionTransition{Type: triples[i], Status: triples[i+1], Reason: triples[i+2]})
		}
		return out
	}
	s := newScrubber(&Observation{Nodes: []Node{{Name: "worker-0"}}})
	for _, tc := range []struct {
		name    string
		in      []ConditionTransition
		deleted bool
		want    string
	}{
		{"interleaving of types does not matter", tr("Validated", "False", "", "Connected", "False", "", "Connected", "True", "", "Validated", "True", ""), false,
			"live: Connected=True, Validated=True"},
		{"seen first when already True or after a detour: the same", tr("Validated", "True", "", "Ready", "False", "", "Ready", "True", "", "Ready", "False", "", "Ready", "True", ""), false,
			"live: Ready=True, Validated=True"},
		{"ending worse than it started shows", tr("Ready", "True", "", "Ready", "False", ""), false,
			"live: Ready=False"},
		{"the final reason shows, scrubbed", tr("Ready", "False", "Provisioning", "Ready", "True", "worker-0"), false,
			"live: Ready=True(<node>)"},
		{"a deleted object says so", tr("Deleting", "True", "Drain"), true,
			"deleted: Deleting=True(Drain)"},
	} {
		obj := Object{Conditions: tc.in}
		if tc.deleted {
			obj.DeletedAt = &time.Time{}
		}
		got := conditionLine(obj, s)
		if got != tc.want {
			t.Errorf("%s: got %q, want %q", tc.name, got, tc.want)
		}
		if _, _, ok := parseConditionLine(got); !ok {
			t.Errorf("%s: %q does not parse back", tc.name, got)
		}
	}
}

// An infrastructure ID derived from the cluster's name is scrubbed as the
// identifier the observation declares, whatever its random letters; an
// undeclared derived name is not guessed at.
func TestScrubReplacesDeclaredIdentifiers(t *testing.T) {
	o := &Observation{Cluster: "site-a", Objects: []Object{{Name: "site-a-workers", UID: "u1"}},
		Identifiers: []Identifier{{Kind: "infra-id", Value: "site-a-x7f3q"}}}
	s := newScrubber(o)
	for in, want := range map[string]string{
		"machine.openshift.io/cluster-api-cluster=site-a-x7f3q": "machine.openshift.io/cluster-api-cluster=<infra-id>",
		"site-a-x7f3q-worker-0-b55dr":                           "<infra-id>-worker-0-<rand>",
		"site-a-workers":                                        "<name>",
		"site-a":                                                "<cluster>",
		"site-b-x7f3q":                                          "site-b-x7f3q",
	} {
		if got := s.scrub(in); got != want {
			t.Errorf("scrub(%q) = %q, want %q", in, got, want)
		}
	}
}
