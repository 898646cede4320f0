package results

import (
	"strings"
	"testing"
)

// The built-in registry parses, every entry cites upstream code, and it
// explains every difference of the day1 example (which mirrors what the
// day1 scenario records).
func TestDefaultRegistry(t *testing.T) {
	reg, err := DefaultRegistry()
	if err != nil {
		t.Fatal(err)
	}
	if len(reg.Entries) < 10 {
		t.Fatalf("only %d entries", len(reg.Entries))
	}
	for _, e := range reg.Entries {
		if e.Catalogue == "" {
			t.Errorf("%s: name the parity catalogue row it comes from", e.ID)
		}
		if !strings.Contains(e.Upstream[0].Link(), "github.com/") {
			t.Errorf("%s: the first reference should be upstream code", e.ID)
		}
	}
	pairs, err := LoadDir("testdata/day1")
	if err != nil {
		t.Fatal(err)
	}
	r := Build(pairs, reg, Options{})
	if c := r.Counts(); c.Regression != 0 || c.KnownDivergence == 0 || c.Stale != 0 {
		t.Fatalf("day1 example against the built-in registry: %s", r.Summary())
	}
}

func TestParseRegistryRejectsBadEntries(t *testing.T) {
	for name, doc := range map[string]string{
		"wrong apiVersion": `apiVersion: v9
divergences: []`,
		"unknown field": `apiVersion: paritylab.io/known-divergences/v1
divergences:
- {id: a, summary: s, aspect: nodes/labels, explanation: e, upstream: [{url: "https://x"}], colour: red}`,
		"duplicate id": `apiVersion: paritylab.io/known-divergences/v1
divergences:
- {id: a, summary: s, aspect: nodes/labels, explanation: e, upstream: [{url: "https://x"}]}
- {id: a, summary: s, aspect: nodes/taints, explanation: e, upstream: [{url: "https://x"}]}`,
		"bad regexp": `apiVersion: paritylab.io/known-divergences/v1
divergences:
- {id: a, summary: s, aspect: nodes/labels, mapi: ["("], explanation: e, upstream: [{url: "https://x"}]}`,
		"no upstream": `apiVersion: paritylab.io/known-divergences/v1
divergences:
- {id: a, summary: s, aspect: nodes/labels, explanation: e}`,
		"no explanation": `apiVersion: paritylab.io/known-divergences/v1
divergences:
- {id: a, summary: s, aspect: nodes/labels, upstream: [{url: "https://x"}]}`,
		"bad id": `apiVersion: paritylab.io/known-divergences/v1
divergences:
- {id: "Not An Id", summary: s, aspect: nodes/labels, explanation: e, upstream: [{url: "https://x"}]}`,
		"bad glob": `apiVersion: paritylab.io/known-divergences/v1
divergences:
- {id: a, summary: s, aspect: "nodes/[", explanation: e, upstream: [{url: "https://x"}]}`,
		"half a reference": `apiVersion: paritylab.io/known-divergences/v1
divergences:
- {id: a, summary: s, aspect: nodes/labels, explanation: e, upstream: [{repository: o/r}]}`,
	} {
		if _, err := ParseRegistry([]byte(doc)); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

func TestEntryScope(t *testing.T) {
	e := &Entry{Scenarios: []string{"day2-scale*"}, Aspect: "objects/*/phases"}
	for _, tc := range []struct {
		scenario, aspect string
		want             bool
	}{
		{"day2-scale", "objects/machine/phases", true},
		{"day2-scale-ztp", "objects/host/phases", true},
		{"day1", "objects/machine/phases", false},
		{"day2-scale", "objects/machine/conditions", false},
		{"day2-scale", "objects/a/b/phases", false},
	} {
		if got := e.appliesTo(tc.scenario, tc.aspect); got != tc.want {
			t.Errorf("appliesTo(%s, %s) = %t", tc.scenario, tc.aspect, got)
		}
	}
}
