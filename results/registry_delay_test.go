package results

import (
	"strings"
	"testing"
	"time"
)

// delayRegistry allows CAPI a wait of up to upTo in the sample's
// scale-up phase.
func delayRegistry(t *testing.T, upTo string) *Registry {
	t.Helper()
	reg, err := ParseRegistry([]byte(`
apiVersion: paritylab.io/known-divergences/v1
scenarios: [day2-scale]
divergences:
- id: capi-scale-up-wait
  summary: CAPI waits in scale-up
  scenarios: [day2-scale]
  aspect: durations/scale-up
  delay: {flow: capi, upTo: ` + upTo + `}
  explanation: test
  upstream: [{url: "https://example.invalid"}]
`))
	if err != nil {
		t.Fatal(err)
	}
	return reg
}

// scaleUpPair is the sample with a 20 s scale-up phase under MAPI and
// one longer by extra under CAPI.
func scaleUpPair(t *testing.T, mapiExtra, capiExtra time.Duration) Pair {
	t.Helper()
	m := readObservation(t, "testdata/acceptance/scale-sample.mapi.json")
	c := readObservation(t, "testdata/acceptance/scale-sample.mapi.json")
	c.Flow = FlowCAPI
	p := m.Phases()[0]
	if p.Name != "scale-up" {
		t.Fatalf("sample's first phase is %s, want scale-up", p.Name)
	}
	mEnd, cEnd := p.Start.Add(20*time.Second+mapiExtra), p.Start.Add(20*time.Second+capiExtra)
	m.Milestones[0].ReachedAt, c.Milestones[0].ReachedAt = &mEnd, &cEnd
	return Pair{Scenario: "day2-scale", A: m, B: c}
}

// slowScaleUp compares the sample with CAPI's scale-up phase made longer
// by extra.
func slowScaleUp(t *testing.T, reg *Registry, extra time.Duration) (AspectResult, []EntryResult) {
	t.Helper()
	res := mustCompare(t, scaleUpPair(t, 0, extra), reg, DefaultOptions())
	a, _ := res.Aspect("durations/scale-up")
	return a, reg.entryResults([]ScenarioResult{res})
}

// A delay entry explains a phase that is slower by no more than its wait
// (and reproduces), not one slower by more (a Regression, whose note says
// what the entry allowed); within the tolerance it explains its flow
// being slower, so that a run a little faster or slower gets the same
// verdict, and it is stale when its flow is not the slower.
func TestDelayExplainsOnlyItsWait(t *testing.T) {
	reg := delayRegistry(t, "60s")
	a, entries := slowScaleUp(t, reg, 70*time.Second)
	if a.Verdict != KnownDivergence || len(a.Known) != 1 || entries[0].Status != Reproduced {
		t.Fatalf("a 70s longer phase with a 60s wait: %+v, entry %s", a, entries[0].Status)
	}
	a, _ = slowScaleUp(t, reg, 3*time.Minute)
	if a.Verdict != Regression || !strings.Contains(a.Note, "without the waits of capi-scale-up-wait") {
		t.Fatalf("a 3m longer phase with a 60s wait: %+v", a)
	}
	a, entries = slowScaleUp(t, reg, 0)
	if a.Verdict != Parity || entries[0].Status != Stale {
		t.Fatalf("a phase as long on both sides: %+v, entry %s", a, entries[0].Status)
	}
	// Slower within the tolerance: the wait shows and explains it.
	a, entries = slowScaleUp(t, reg, 10*time.Second)
	if a.Verdict != KnownDivergence || len(a.Known) != 1 || !strings.Contains(a.Note, "within the tolerance") || entries[0].Status != Reproduced {
		t.Fatalf("a phase 10s longer with a 60s wait: %+v, entry %s", a, entries[0].Status)
	}
	// The other flow slower within the tolerance: the wait does not show.
	res := mustCompare(t, scaleUpPair(t, 10*time.Second, 0), reg, DefaultOptions())
	if a, _ := res.Aspect("durations/scale-up"); a.Verdict != Parity {
		t.Fatalf("a MAPI phase 10s longer with a CAPI wait: %+v", a)
	}
	if got := reg.entryResults([]ScenarioResult{res}); got[0].Status != Stale {
		t.Fatalf("a MAPI phase 10s longer with a CAPI wait: entry %s", got[0].Status)
	}
}

// The wait is taken off the flow that has it only: the same entry does
// not explain a MAPI flow that is slower.
func TestDelayIsOneSided(t *testing.T) {
	reg := delayRegistry(t, "60s")
	res := mustCompare(t, scaleUpPair(t, 70*time.Second, 0), reg, DefaultOptions())
	if a, _ := res.Aspect("durations/scale-up"); a.Verdict != Regression {
		t.Fatalf("a slower MAPI phase with a CAPI wait: %+v", a)
	}
}

// Delay entries are held to one phase, one flow, a bounded wait and no
// lines.
func TestLoaderHoldsDelaysToOnePhase(t *testing.T) {
	for _, tc := range []struct{ name, fields, want string }{
		{"glob", "  aspect: durations/*\n  delay: {flow: mapi, upTo: 60s}\n", "without glob characters"},
		{"total", "  aspect: durations/total\n  delay: {flow: mapi, upTo: 60s}\n", "not durations/total"},
		{"not a duration", "  aspect: nodes/labels\n  delay: {flow: mapi, upTo: 60s}\n", "must be durations/<phase>"},
		{"flow", "  aspect: durations/install\n  delay: {flow: both, upTo: 60s}\n", "must be mapi or capi"},
		{"unbounded", "  aspect: durations/install\n  delay: {flow: mapi, upTo: 1h}\n", "at most 5m0s"},
		{"no wait", "  aspect: durations/install\n  delay: {flow: mapi, upTo: 0s}\n", "more than 0"},
		{"lines too", "  aspect: durations/install\n  delay: {flow: mapi, upTo: 60s}\n  mapi: ['1m0s']\n", "names no lines"},
		{"durations without delay", "  aspect: durations/install\n  mapi: ['1m0s']\n", "explain a wait of one flow in one phase with delay"},
	} {
		_, err := ParseRegistry(ruleDoc(entryYAML("delay-"+strings.ReplaceAll(tc.name, " ", "-"), tc.fields)))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want it to say %q", tc.name, err, tc.want)
		}
	}
}
