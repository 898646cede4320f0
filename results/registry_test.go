package results

import (
	"strings"
	"testing"
)

// The built-in registry parses, every entry cites upstream code, and the
// observations of a real, passing run (testdata/real) pass against it: no
// regression, no stale entry, and every entry explains a difference of
// that run (the run exercises them all).
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
	r := mustBuild(t, realPairs(t), reg, DefaultOptions())
	if c := r.Counts(); r.Failed() || c.Regression != 0 || c.KnownDivergence == 0 || c.Stale != 0 {
		t.Fatalf("the real run against the built-in registry: %s", r.Summary())
	}
	for _, e := range r.Entries {
		if e.Status != Reproduced && e.Entry.Intermittent == "" {
			t.Errorf("entry %s is %s in the real run, want Reproduced", e.Entry.ID, e.Status)
		}
	}
}

// raceDirs hold real runs in each of which a race some intermittent
// entries name fell differently under the two flows (see their READMEs).
var raceDirs = []string{"testdata/race", "testdata/race-machine-phase"}

// Every intermittent entry explains its race in a real run that lost it
// under one flow only, and each such run passes; the real run, where the
// races fell alike, needs none of them.
func TestIntermittentEntriesExplainARealRace(t *testing.T) {
	reg := builtIn(t)
	reproduced := map[string]bool{}
	for _, dir := range raceDirs {
		pairs, err := LoadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		r := mustBuild(t, pairs, reg, DefaultOptions())
		if c := r.Counts(); r.Failed() || c.Regression != 0 || c.KnownDivergence == 0 {
			t.Fatalf("the racing run %s against the built-in registry: %s", dir, r.Summary())
		}
		for _, e := range r.Entries {
			if e.Entry.Intermittent != "" && e.Status == Reproduced {
				reproduced[e.Entry.ID] = true
			}
		}
	}
	n := 0
	for _, e := range reg.Entries {
		if e.Intermittent == "" {
			continue
		}
		n++
		if !reproduced[e.ID] {
			t.Errorf("intermittent entry %s is reproduced in none of the racing runs %v", e.ID, raceDirs)
		}
	}
	if n == 0 {
		t.Error("the registry has no intermittent entry")
	}
	realRun := mustBuild(t, realPairs(t), reg, DefaultOptions())
	for _, e := range realRun.Entries {
		if e.Entry.Intermittent != "" && e.Status == Stale {
			t.Errorf("intermittent entry %s is stale in the real run", e.Entry.ID)
		}
	}
}

func TestParseRegistryRejectsBadEntries(t *testing.T) {
	const head = "apiVersion: paritylab.io/known-divergences/v1\nscenarios: [day1]\ndivergences:\n"
	for name, tc := range map[string]struct{ doc, want string }{
		"wrong apiVersion": {`apiVersion: v9
scenarios: [day1]
divergences: []`, "apiVersion"},
		"unknown field": {head + `- {id: a, summary: s, aspect: nodes/labels, mapi: [x=1], explanation: e, upstream: [{url: "https://x"}], colour: red}`, "colour"},
		"duplicate id": {head + `- {id: a, summary: s, aspect: nodes/labels, mapi: [x=1], explanation: e, upstream: [{url: "https://x"}]}
- {id: a, summary: s, aspect: nodes/taints, mapi: [x=1], explanation: e, upstream: [{url: "https://x"}]}`, "used twice"},
		"bad regexp":       {head + `- {id: a, summary: s, aspect: nodes/labels, mapi: ["("], explanation: e, upstream: [{url: "https://x"}]}`, "compile"},
		"no upstream":      {head + `- {id: a, summary: s, aspect: nodes/labels, mapi: [x=1], explanation: e}`, "upstream reference is required"},
		"no explanation":   {head + `- {id: a, summary: s, aspect: nodes/labels, mapi: [x=1], upstream: [{url: "https://x"}]}`, "explanation are required"},
		"bad id":           {head + `- {id: "Not An Id", summary: s, aspect: nodes/labels, mapi: [x=1], explanation: e, upstream: [{url: "https://x"}]}`, "lower-case"},
		"bad glob":         {head + `- {id: a, summary: s, aspect: "nodes/[", mapi: [x=1], explanation: e, upstream: [{url: "https://x"}]}`, "bad glob"},
		"half a reference": {head + `- {id: a, summary: s, aspect: nodes/labels, mapi: [x=1], explanation: e, upstream: [{repository: o/r}]}`, "repository and path"},
		"no declared scenarios": {`apiVersion: paritylab.io/known-divergences/v1
divergences:
- {id: a, summary: s, aspect: nodes/labels, mapi: [x=1], explanation: e, upstream: [{url: "https://x"}]}`, "declare the scenarios"},
	} {
		_, err := ParseRegistry([]byte(tc.doc))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v, want an error mentioning %q", name, err, tc.want)
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
