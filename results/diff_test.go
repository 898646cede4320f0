package results

import (
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestMultisetDiffCountsRepeats(t *testing.T) {
	a := []string{"a", "a", "b", "c"}
	b := []string{"a", "c", "c", "d"}
	onlyA, onlyB := multisetDiff(a, b)
	if !reflect.DeepEqual(onlyA, []string{"a", "b"}) || !reflect.DeepEqual(onlyB, []string{"c", "d"}) {
		t.Fatalf("got %v / %v", onlyA, onlyB)
	}
}

func TestCompareDurations(t *testing.T) {
	opts := DefaultOptions()
	for _, tc := range []struct {
		m, c   time.Duration
		differ bool
	}{
		{10 * time.Minute, 14 * time.Minute, false}, // 1.4×
		{10 * time.Minute, 16 * time.Minute, true},  // 1.6×
		{16 * time.Minute, 10 * time.Minute, true},  // faster counts too
		{5 * time.Second, 30 * time.Second, false},  // 6× but within the slack
		{0, 20 * time.Second, false},
		{0, 2 * time.Minute, true},
	} {
		differ, note := compareDurations(defaultSides, tc.m, tc.c, opts)
		if differ != tc.differ {
			t.Errorf("%s vs %s: differ=%t, want %t (%s)", tc.m, tc.c, differ, tc.differ, note)
		}
	}
}

func TestCompareClassifiesEveryAspect(t *testing.T) {
	m := readObservation(t, "testdata/acceptance/scale-sample.mapi.json")
	c := readObservation(t, "testdata/acceptance/scale-sample.capi.json")
	res := mustCompare(t, Pair{Scenario: m.Scenario, A: m, B: c}, acceptanceRegistry(t), DefaultOptions())
	if res.Count(Parity)+res.Count(KnownDivergence)+res.Count(Regression) != len(res.Aspects) {
		t.Fatal("an aspect without a verdict")
	}
	got := map[string]Verdict{}
	for _, a := range res.Aspects {
		got[a.Aspect] = a.Verdict
	}
	if got["nodes/providerID"] != KnownDivergence || got["nodes/taints"] != Regression || got["nodes/labels"] != Parity {
		t.Fatalf("verdicts: %v", got)
	}
}

func TestCompareSlowFlowIsARegression(t *testing.T) {
	m := readObservation(t, "testdata/acceptance/scale-sample.mapi.json")
	c := readObservation(t, "testdata/acceptance/scale-sample.mapi.json")
	c.Flow = FlowCAPI
	slow := c.Phases()[0].Start.Add(20 * time.Minute)
	c.Milestones[0].ReachedAt = &slow
	res := mustCompare(t, Pair{Scenario: m.Scenario, A: m, B: c}, nil, DefaultOptions())
	a, _ := res.Aspect("durations/scale-up")
	if a.Verdict != Regression || !strings.Contains(a.Note, "CAPI/MAPI = 5.00×") {
		t.Fatalf("got %+v", a)
	}
	if a, _ := res.Aspect("durations/total"); a.Verdict != Parity {
		t.Fatalf("total should be within tolerance: %+v", a)
	}
}

func TestCompareMissingFlow(t *testing.T) {
	m := readObservation(t, "testdata/acceptance/scale-sample.mapi.json")
	res := mustCompare(t, Pair{Scenario: m.Scenario, A: m}, nil, DefaultOptions())
	if len(res.Aspects) != 1 || res.Aspects[0].Verdict != Regression || !strings.Contains(res.Aspects[0].Note, "CAPI flow left no observation") {
		t.Fatalf("got %+v", res.Aspects)
	}
}

func TestRegistryPatternsExplainOnlyTheirLines(t *testing.T) {
	reg, err := ParseRegistry([]byte(`
apiVersion: paritylab.io/known-divergences/v1
scenarios: [any]
divergences:
- id: custom-labels
  summary: custom labels reach MAPI nodes only
  aspect: nodes/labels
  mapi: ['example\.com/[a-z]+(=.*)?', 'node-role\.kubernetes\.io/[a-z]+']
  except: ['node-role\.kubernetes\.io/.*']
  explanation: test
  upstream: [{url: "https://example.invalid"}]
`))
	if err != nil {
		t.Fatal(err)
	}
	ar := AspectResult{Aspect: "nodes/labels", Verdict: Regression, OnlyMAPI: []string{"example.com/team=a"}}
	reg.classify("any", &ar)
	if ar.Verdict != KnownDivergence {
		t.Fatalf("custom label should be explained: %+v", ar)
	}
	ar = AspectResult{Aspect: "nodes/labels", Verdict: Regression, OnlyMAPI: []string{"example.com/team=a", "node-role.kubernetes.io/worker"}}
	reg.classify("any", &ar)
	if ar.Verdict != Regression || !reflect.DeepEqual(ar.UnexplainedMAPI, []string{"node-role.kubernetes.io/worker"}) || len(ar.Known) != 1 {
		t.Fatalf("a lost role label must stay a regression: %+v", ar)
	}
	ar = AspectResult{Aspect: "nodes/labels", Verdict: Regression, OnlyCAPI: []string{"example.com/team=a"}}
	reg.classify("any", &ar)
	if ar.Verdict != Regression {
		t.Fatalf("an entry with mapi patterns must not explain CAPI lines: %+v", ar)
	}
}

func TestObservationWithoutRoleIsNotCompared(t *testing.T) {
	m := readObservation(t, "testdata/real/day1.mapi.json")
	for _, a := range Aspects(m) {
		if strings.Contains(a.Name, "ClusterDeployment") || strings.Contains(a.Name, "clusterdeployment") {
			t.Errorf("role-less object compared: %s", a.Name)
		}
	}
}

func readObservation(t testing.TB, file string) *Observation {
	t.Helper()
	o, err := ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	return o
}
