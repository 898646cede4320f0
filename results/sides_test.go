package results

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
	"testing"
)

// hostedPair is a pair of a HyperShift scenario made from the real run's
// CAPI day1 observation: side A as it is, side B a copy of it under the
// scenario's other flow, so the two start identical.
func hostedPair(t *testing.T, scenario string) Pair {
	t.Helper()
	sides := SidesOf(scenario)
	a := readObservation(t, realDir+"/day1.capi.json")
	a.Scenario, a.Flow = scenario, sides.A
	b := deepCopy(t, a)
	b.Flow = sides.B
	for _, o := range []*Observation{a, b} {
		if err := o.Validate(); err != nil {
			t.Fatalf("the %s observation is not one a driver could write: %v", o.Flow, err)
		}
	}
	return Pair{Scenario: scenario, A: a, B: b}
}

func TestSidesOf(t *testing.T) {
	for scenario, want := range map[string]Sides{
		"day1":                         {A: FlowMAPI, B: FlowCAPI, TitleA: "MAPI", TitleB: "CAPI"},
		"some-future-scenario":         {A: FlowMAPI, B: FlowCAPI, TitleA: "MAPI", TitleB: "CAPI"},
		ScenarioHyperShiftPrivateTypes: {A: FlowCAPI, B: FlowCAPIPrivate, TitleA: "CAPI standard types", TitleB: "CAPI private types"},
		ScenarioHyperShiftMigration:    {A: FlowCAPI, B: FlowCAPIMigrated, TitleA: "CAPI before migration", TitleB: "CAPI after migration"},
	} {
		if got := SidesOf(scenario); got != want {
			t.Errorf("SidesOf(%q) = %+v, want %+v", scenario, got, want)
		}
	}
	if got, want := allFlows(), []Flow{FlowMAPI, FlowCAPI, FlowCAPIMigrated, FlowCAPIPrivate}; !slices.Equal(got, want) {
		t.Errorf("allFlows() = %v, want %v", got, want)
	}
}

// PairUp puts each observation on its scenario's side, whatever the
// order it comes in, and refuses a flow the scenario does not compare or
// a side twice.
func TestPairUpPlacesHyperShiftSides(t *testing.T) {
	for _, scenario := range []string{ScenarioHyperShiftPrivateTypes, ScenarioHyperShiftMigration} {
		t.Run(scenario, func(t *testing.T) {
			p := hostedPair(t, scenario)
			pairs, err := PairUp([]*Observation{p.B, p.A})
			if err != nil {
				t.Fatal(err)
			}
			if len(pairs) != 1 || pairs[0].A != p.A || pairs[0].B != p.B || pairs[0].A.Flow != FlowCAPI {
				t.Fatalf("pairs %+v: want the capi observation on side A and the %s one on side B", pairs, SidesOf(scenario).B)
			}
			if _, err := PairUp([]*Observation{p.B, deepCopy(t, p.B)}); err == nil || !strings.Contains(err.Error(), "two "+string(p.B.Flow)+" observations") {
				t.Errorf("two observations of side B: %v", err)
			}
			other := deepCopy(t, p.A)
			other.Flow = FlowMAPI
			if _, err := PairUp([]*Observation{other}); err == nil || !strings.Contains(err.Error(), "not mapi") {
				t.Errorf("a mapi observation of %s: %v", scenario, err)
			}
		})
	}
	private := hostedPair(t, ScenarioHyperShiftPrivateTypes).B
	private.Scenario = "day1"
	if _, err := PairUp([]*Observation{private}); err == nil || !strings.Contains(err.Error(), `scenario "day1" compares mapi (MAPI) and capi (CAPI), not capi-private`) {
		t.Errorf("a capi-private observation of day1: %v", err)
	}
}

// A side that left no observation is named by its title.
func TestMissingSideNamesItsTitle(t *testing.T) {
	p := hostedPair(t, ScenarioHyperShiftPrivateTypes)
	s := mustCompare(t, Pair{Scenario: p.Scenario, A: p.A}, nil, DefaultOptions())
	want := `the CAPI private types flow left no observation for scenario "hypershift-private-types"`
	if len(s.Aspects) != 1 || s.Aspects[0].Aspect != observationAspect || s.Aspects[0].Note != want {
		t.Errorf("aspects %+v, want one observation regression noting %q", s.Aspects, want)
	}
	if got := s.FailedFlows(); !slices.Equal(got, []Flow{FlowCAPIPrivate}) {
		t.Errorf("failed flows %v, want [capi-private]", got)
	}
	if got, want := s.FlowFailure(FlowCAPIPrivate), "the CAPI private types flow left no observation"; got != want {
		t.Errorf("flow failure %q, want %q", got, want)
	}
	if got, want := flowFailedLines(s), []string{"CAPI private types flow failed: it left no observation"}; !slices.Equal(got, want) {
		t.Errorf("failed lines %q, want %q", got, want)
	}
}

// An observation names one of its scenario's two flows: Validate, and so
// Decode, refuses a capi-private observation of day1 and a mapi one of
// hypershift-private-types, and says which flows the scenario compares.
func TestValidateTakesTheScenarioFlows(t *testing.T) {
	for _, tc := range []struct {
		scenario string
		flow     Flow
		want     string
	}{
		{"day1", FlowCAPIPrivate, `flow "capi-private" must be "mapi" or "capi", the flows scenario "day1" compares`},
		{"day1", FlowCAPIMigrated, `flow "capi-migrated" must be "mapi" or "capi"`},
		{ScenarioHyperShiftPrivateTypes, FlowMAPI, `flow "mapi" must be "capi" or "capi-private", the flows scenario "hypershift-private-types" compares`},
		{ScenarioHyperShiftMigration, FlowCAPIPrivate, `flow "capi-private" must be "capi" or "capi-migrated"`},
		{ScenarioHyperShiftPrivateTypes, FlowCAPIPrivate, ""},
		{ScenarioHyperShiftMigration, FlowCAPIMigrated, ""},
		{"day1", FlowMAPI, ""},
	} {
		o := readObservation(t, realDir+"/day1.capi.json")
		o.Scenario, o.Flow = tc.scenario, tc.flow
		var buf bytes.Buffer
		if err := json.NewEncoder(&buf).Encode(o); err != nil {
			t.Fatal(err)
		}
		_, err := Decode(&buf)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s %s: %v", tc.scenario, tc.flow, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s %s: error %v, want %q", tc.scenario, tc.flow, err, tc.want)
		}
	}
}

// A private-types report calls its sides by their titles in every
// format, and never MAPI.
func TestHyperShiftReportsTitleTheSides(t *testing.T) {
	p := hostedPair(t, ScenarioHyperShiftPrivateTypes)
	capiNodeNotReady(t, p.A, p.B)
	r := mustBuild(t, []Pair{p}, nil, DefaultOptions())
	var text, html, junit, md bytes.Buffer
	for _, err := range []error{r.WriteText(&text), r.WriteHTML(&html), r.WriteJUnit(&junit), r.WriteMarkdown(&md)} {
		if err != nil {
			t.Fatal(err)
		}
	}
	a, ok := r.Scenarios[0].Aspect("nodes/ready")
	if !ok {
		t.Fatal("no nodes/ready aspect")
	}
	sbs := sideBySide(r.Scenarios[0].Sides(), a)
	if head := strings.SplitN(sbs, "\n", 2)[0]; head != "  CAPI standard types | CAPI private types" {
		t.Errorf("side-by-side heading %q", head)
	}
	const msg = `nodes/ready differs and no known divergence explains it: CAPI standard types has "Ready" that CAPI private types lacks; ` +
		`CAPI private types has "NotReady" that CAPI standard types lacks`
	for _, out := range []struct {
		name, got string
		want      []string
	}{
		{"text", text.String(), []string{
			"  CAPI standard types backends: ", "  CAPI private types backends: ", "REGRESSION  nodes/ready: " + msg, indent(sbs, "      "),
		}},
		{"html", html.String(), []string{
			"<title>CAPI standard types vs CAPI private types parity", "<h1>CAPI standard types vs CAPI private types parity",
			"<th>CAPI standard types flow</th><th>CAPI private types flow</th>",
			"<th>milestone</th><th>CAPI standard types</th><th>CAPI private types</th><th>delta (CAPI private types − CAPI standard types)</th>",
			`<tr><th class="m"></th><th>CAPI standard types</th><th>CAPI private types</th></tr>`,
			"CAPI standard types and CAPI private types: the same lines", "CAPI standard types 5 lines, CAPI private types 5 lines",
			"<summary>CAPI standard types flow: ", "<summary>CAPI private types flow: ",
		}},
		{"junit", junit.String(), []string{
			`message="nodes/ready differs and no known divergence explains it: CAPI standard types has &#34;Ready&#34; that CAPI private types lacks;`,
			"<![CDATA[" + sbs, "otherwise fix the CAPI private types flow.", `name="capi-private.outcome"`,
		}},
		{"markdown", md.String(), []string{
			"# CAPI standard types vs CAPI private types parity", "| CAPI standard types backends | CAPI private types backends |",
			"| fact | CAPI standard types flow | CAPI private types flow |", msg, "```\n" + sbs + "\n```",
		}},
	} {
		for _, w := range out.want {
			if !strings.Contains(out.got, w) {
				t.Errorf("%s report lacks %q", out.name, w)
			}
		}
		if strings.Contains(out.got, "MAPI") {
			t.Errorf("%s report names MAPI, which the scenario does not compare", out.name)
		}
	}
}

// A report of scenarios with different sides names each comparison in its
// title and its scenario table's legend.
func TestMixedReportNamesEverySides(t *testing.T) {
	m := readObservation(t, realDir+"/day1.mapi.json")
	c := readObservation(t, realDir+"/day1.capi.json")
	r := mustBuild(t, []Pair{{Scenario: "day1", A: m, B: c}, hostedPair(t, ScenarioHyperShiftMigration)}, nil, DefaultOptions())
	if got, want := r.comparison(), "MAPI vs CAPI, CAPI before migration vs CAPI after migration"; got != want {
		t.Errorf("comparison %q, want %q", got, want)
	}
	var md bytes.Buffer
	if err := r.WriteMarkdown(&md); err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{
		"Side A and side B are MAPI and CAPI in day1; CAPI before migration and CAPI after migration in hypershift-migration.",
		"| side A backends | side B backends | side A time | side B time |",
		"| fact | CAPI before migration flow | CAPI after migration flow |",
	} {
		if !strings.Contains(md.String(), w) {
			t.Errorf("markdown lacks %q", w)
		}
	}
}
