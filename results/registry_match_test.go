package results

import (
	"bytes"
	"reflect"
	"slices"
	"strings"
	"testing"
)

func builtIn(t *testing.T) *Registry {
	t.Helper()
	reg, err := DefaultRegistry()
	if err != nil {
		t.Fatal(err)
	}
	return reg
}

func repeat(line string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = line
	}
	return out
}

// Unhealthy lines stay regressions under the built-in entries that
// explain the healthy ones.
func TestUnhealthyLinesStayRegressions(t *testing.T) {
	reg := builtIn(t)
	// A healthy Machine of each flow, as the real run recorded them.
	mapiMachine := "live: Drainable=True, InstanceExists=True, Terminable=True"
	capiMachine := "live: Available=True(Available), BootstrapConfigReady=True(InfoReported), Deleting=False(NotDeleting), InfrastructureReady=True(Ready), NodeHealthy=True(NodeHealthy), NodeReady=True(NodeReady), Paused=False(NotPaused), Ready=True(Ready), UpToDate=True(UpToDate), Updating=False(NotUpdating)"
	for _, tc := range []struct {
		name, aspect    string
		mapi, capi      []string
		wantUnexplained string
	}{
		{"healthy machines are explained", "objects/machine/conditions", []string{mapiMachine}, []string{capiMachine}, ""},
		{"a CAPI Machine not Ready", "objects/machine/conditions", []string{mapiMachine},
			[]string{strings.Replace(capiMachine, ", Ready=True(Ready)", ", Ready=False(NotReady)", 1)}, "Ready=False"},
		{"a MAPI Machine whose instance is gone", "objects/machine/conditions",
			[]string{"live: Drainable=True, InstanceExists=False, Terminable=True"}, []string{capiMachine}, "InstanceExists=False"},
		{"a condition type outside the entry", "objects/machine/conditions", []string{mapiMachine},
			[]string{"live: Ready=True, Frobnicated=True"}, "Frobnicated"},
		{"a CAPI host powered off", "hosts/state",
			[]string{"unmanaged operational=discovered power=off online=true"}, []string{"provisioned operational=OK power=off online=true"}, "power=off"},
		{"a spoke host in error", "hosts/state",
			[]string{"unmanaged operational=error power=off online=true"}, []string{"provisioned operational=OK power=on online=true"}, "operational=error"},
	} {
		ar := AspectResult{Aspect: tc.aspect, Verdict: Regression, MAPI: tc.mapi, CAPI: tc.capi, OnlyMAPI: tc.mapi, OnlyCAPI: tc.capi}
		reg.classify("day1", &ar)
		unexplained := strings.Join(append(ar.UnexplainedMAPI, ar.UnexplainedCAPI...), " | ")
		switch {
		case tc.wantUnexplained == "" && ar.Verdict != KnownDivergence:
			t.Errorf("%s: %s, unexplained %q", tc.name, ar.Verdict, unexplained)
		case tc.wantUnexplained != "" && (ar.Verdict != Regression || !strings.Contains(unexplained, tc.wantUnexplained)):
			t.Errorf("%s: %s, unexplained %q; want a regression on %q", tc.name, ar.Verdict, unexplained, tc.wantUnexplained)
		}
	}
}

// A reason pinned in an entry must be the reason the line has.
func TestPinnedReason(t *testing.T) {
	reg, err := ParseRegistry(ruleDoc(entryYAML("pinned", "  aspect: objects/machine/conditions\n  conditions: {capi: {live: {Ready: \"True(AsExpected)\"}}}\n")))
	if err != nil {
		t.Fatal(err)
	}
	for line, want := range map[string]Verdict{
		"live: Ready=True(AsExpected)":    KnownDivergence,
		"live: Ready=True(Other)":         Regression,
		"live: Ready=True":                Regression,
		"deleted: Ready=True(AsExpected)": Regression,
	} {
		ar := AspectResult{Aspect: "objects/machine/conditions", Verdict: Regression, OnlyCAPI: []string{line}}
		reg.classify("day1", &ar)
		if ar.Verdict != want {
			t.Errorf("%q: %s, want %s", line, ar.Verdict, want)
		}
	}
}

// An entry that explains lines of both flows pairs them one to one: five
// MAPI lines against three CAPI lines stay unexplained and the note says
// why; countsDiffer lets an entry say the numbers really differ.
func TestMultiplicityCounts(t *testing.T) {
	reg := builtIn(t)
	mapi, capi := repeat("baremetalhost://", 5), repeat("metal3://", 3)
	ar := AspectResult{Aspect: "nodes/providerID", Verdict: Regression, MAPI: mapi, CAPI: capi, OnlyMAPI: mapi, OnlyCAPI: capi}
	reg.classify("day1", &ar)
	if ar.Verdict != Regression || len(ar.UnexplainedMAPI) != 5 || len(ar.UnexplainedCAPI) != 3 || len(ar.Known) != 0 {
		t.Fatalf("5 against 3 must stay unexplained: %+v", ar)
	}
	if !strings.Contains(ar.Note, "entry providerid-format explains 5 MAPI line(s) but 3 CAPI line(s)") {
		t.Errorf("note %q", ar.Note)
	}
	s := ScenarioResult{Scenario: "day1", Aspects: []AspectResult{ar}}
	if st := reg.entryResults([]ScenarioResult{s})[0]; st.Entry.ID != "providerid-format" || st.Status == Stale {
		t.Errorf("a miscounted entry is not stale, its aspect regressed: %+v", st)
	}
	var text, junit bytes.Buffer
	r := &Report{Scenarios: []ScenarioResult{s}, Options: DefaultOptions()}
	if err := r.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	if err := r.WriteJUnit(&junit); err != nil {
		t.Fatal(err)
	}
	for name, out := range map[string]string{"text": text.String(), "junit": junit.String()} {
		if !strings.Contains(out, "baremetalhost:// (×5)") || !strings.Contains(out, "explains 5 MAPI line(s) but 3 CAPI line(s)") {
			t.Errorf("%s view lacks the counts:\n%s", name, out)
		}
	}

	counted, err := ParseRegistry(ruleDoc(entryYAML("more-capi-annotations",
		"  aspect: nodes/annotations\n  countsDiffer: five annotations where MAPI writes one\n  mapi: ['machine\\.openshift\\.io/machine=<name>']\n  capi: ['cluster\\.x-k8s\\.io/[a-z-]+=<name>']\n")))
	if err != nil {
		t.Fatal(err)
	}
	ar = AspectResult{Aspect: "nodes/annotations", Verdict: Regression,
		OnlyMAPI: []string{"machine.openshift.io/machine=<name>"}, OnlyCAPI: repeat("cluster.x-k8s.io/machine=<name>", 5)}
	counted.classify("day1", &ar)
	if ar.Verdict != KnownDivergence {
		t.Errorf("countsDiffer: %+v", ar)
	}
}

// A requireAll entry explains its lines only when each flow shows every
// line it names: one flow's lost drain event is a regression, however many
// lines of the behaviour are left; the full set is known whatever the
// counts.
func TestRequireAllExplainsWholeBehavioursOnly(t *testing.T) {
	reg, err := ParseRegistry(ruleDoc(entryYAML("drain-events",
		"  aspect: events/normal\n  requireAll: true\n  mapi: ['machine: DrainProceeds', 'machine: DrainSucceeded']\n  capi: ['machine: SuccessfulDrainNode', 'machine: NodeVolumesDetached']\n")))
	if err != nil {
		t.Fatal(err)
	}
	full := []string{"machine: SuccessfulDrainNode", "machine: NodeVolumesDetached"}
	for _, tc := range []struct {
		name       string
		mapi, capi []string
		want       Verdict
		note       string
	}{
		{"both in full", []string{"machine: DrainProceeds", "machine: DrainSucceeded"}, full, KnownDivergence, ""},
		{"CAPI without its drain", []string{"machine: DrainProceeds", "machine: DrainSucceeded"}, full[1:], Regression, `no CAPI line matches "machine: SuccessfulDrainNode"`},
		{"MAPI drained nothing", nil, full, Regression, `no MAPI line matches "machine: DrainProceeds", no MAPI line matches "machine: DrainSucceeded"`},
	} {
		ar := AspectResult{Aspect: "events/normal", Verdict: Regression, OnlyMAPI: tc.mapi, OnlyCAPI: tc.capi}
		reg.classify("day1", &ar)
		if ar.Verdict != tc.want || !strings.Contains(ar.Note, tc.note) {
			t.Errorf("%s: %s (%s), want %s noting %q", tc.name, ar.Verdict, ar.Note, tc.want, tc.note)
		}
		if tc.want == Regression && len(ar.UnexplainedMAPI)+len(ar.UnexplainedCAPI) != len(tc.mapi)+len(tc.capi) {
			t.Errorf("%s: a partial behaviour leaves all its lines unexplained: %+v", tc.name, ar)
		}
	}
}

// An entry for one object's behaviour (lines: 1) explains that one line:
// the same line on a second object is a regression.
func TestLinesBoundsWhatAnEntryExplains(t *testing.T) {
	reg, err := ParseRegistry(ruleDoc(entryYAML("day2-machine-label",
		"  aspect: objects/machine/metadata\n  lines: 1\n  mapi: ['label cluster=<cluster>']\n")))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		mapi []string
		want Verdict
	}{
		{"the one object", []string{"label cluster=<cluster>"}, KnownDivergence},
		{"a second object too", repeat("label cluster=<cluster>", 2), Regression},
	} {
		ar := AspectResult{Aspect: "objects/machine/metadata", Verdict: Regression, OnlyMAPI: tc.mapi}
		reg.classify("day1", &ar)
		if ar.Verdict != tc.want {
			t.Errorf("%s: %s (%s), want %s", tc.name, ar.Verdict, ar.Note, tc.want)
		}
		if tc.want == Regression && (len(ar.UnexplainedMAPI) != len(tc.mapi) || !strings.Contains(ar.Note, "explains 1 line(s) only, here 2")) {
			t.Errorf("%s: want every line unexplained and a note: %+v", tc.name, ar)
		}
	}
}

// An intermittent entry explains its lines under whichever flow has them,
// as many as it says and no more, and a run where the race fell the same
// way under both flows leaves it not stale.
func TestIntermittentExplainsEitherFlowAndNeverGoesStale(t *testing.T) {
	reg, err := ParseRegistry(ruleDoc(entryYAML("power-race",
		"  scenarios: [day1]\n  aspect: hosts/bmc\n  intermittent: the operator's power-on races the provisioning request\n  lines: 2\n"+
			"  mapi: ['power:ForceOff', 'power:On']\n  capi: ['power:ForceOff', 'power:On']\n")))
	if err != nil {
		t.Fatal(err)
	}
	race := []string{"power:ForceOff", "power:On"}
	for _, tc := range []struct {
		name       string
		mapi, capi []string
		want       Verdict
	}{
		{"under side A", race, nil, KnownDivergence},
		{"under side B", nil, race, KnownDivergence},
		{"twice", nil, append(append([]string(nil), race...), race...), Regression},
		{"another line with it", nil, append([]string{"power:GracefulShutdown"}, race...), Regression},
	} {
		ar := AspectResult{Aspect: "hosts/bmc", Verdict: Regression, OnlyMAPI: tc.mapi, OnlyCAPI: tc.capi}
		reg.classify("day1", &ar)
		if ar.Verdict != tc.want {
			t.Errorf("%s: %s (%s), want %s", tc.name, ar.Verdict, ar.Note, tc.want)
		}
	}
	same := ScenarioResult{Scenario: "day1", Aspects: []AspectResult{{Aspect: "hosts/bmc", Verdict: Parity, MAPI: race, CAPI: race}}}
	if got := reg.entryResults([]ScenarioResult{same})[0].Status; got == Stale {
		t.Errorf("the race fell alike under both flows: status %s", got)
	}
}

// An aspect one flow lacks is a regression unless an entry says it exists
// under the other flow only; that entry explains no presence the other
// way round, and presence alone is not enough: its lines must be named.
func TestPresenceOnOneSide(t *testing.T) {
	reg, err := ParseRegistry(ruleDoc(entryYAML("capi-set-conditions",
		"  aspect: objects/machine-set/conditions\n  presentIn: capi\n  conditions: {capi: {live: {MachinesReady: \"True\"}}}\n") +
		entryYAML("set-labels", "  aspect: objects/machine-set/metadata\n  capi: ['label a=b']\n")))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		ar   AspectResult
		want Verdict
	}{
		{"CAPI only, presentIn capi", AspectResult{Aspect: "objects/machine-set/conditions", MAPIAbsent: true, OnlyCAPI: []string{"live: MachinesReady=True"}}, KnownDivergence},
		{"CAPI only, but unhealthy", AspectResult{Aspect: "objects/machine-set/conditions", MAPIAbsent: true, OnlyCAPI: []string{"live: MachinesReady=False"}}, Regression},
		{"MAPI only, presentIn capi", AspectResult{Aspect: "objects/machine-set/conditions", CAPIAbsent: true, OnlyMAPI: []string{"live: MachinesReady=True"}}, Regression},
		{"CAPI only, lines named but no presentIn", AspectResult{Aspect: "objects/machine-set/metadata", MAPIAbsent: true, OnlyCAPI: []string{"label a=b"}}, Regression},
	} {
		tc.ar.Verdict = Regression
		reg.classify("day1", &tc.ar)
		if tc.ar.Verdict != tc.want {
			t.Errorf("%s: %s, want %s (%s)", tc.name, tc.ar.Verdict, tc.want, tc.ar.Note)
		}
	}
}

// A flow that did not succeed fails the run, also when both failed alike,
// and nothing explains it.
func TestBothFlowsFailedAlikeIsAFailure(t *testing.T) {
	m := readObservation(t, "testdata/real/day1.mapi.json")
	c := readObservation(t, "testdata/real/day1.capi.json")
	for _, o := range []*Observation{m, c} {
		o.Outcome = OutcomeFailed
		o.Errors = []Error{{Source: "driver", Message: "timed out waiting for 5 Nodes Ready"}}
	}
	r := mustBuild(t, []Pair{{Scenario: "day1", A: m, B: c}}, builtIn(t), DefaultOptions())
	s := r.Scenarios[0]
	a, _ := s.Aspect("outcome")
	if a.Verdict != Regression || !r.Failed() || !slices.Equal(s.FailedFlows(), []Flow{FlowMAPI, FlowCAPI}) {
		t.Fatalf("both failed: outcome %+v, failed=%t, flows %v", a, r.Failed(), s.FailedFlows())
	}
	for _, want := range []string{"both flows did not succeed", "the MAPI flow did not succeed (failed): driver: timed out", "the CAPI flow did not succeed (failed)"} {
		if !strings.Contains(a.Note, want) {
			t.Errorf("note %q lacks %q", a.Note, want)
		}
	}
	var text bytes.Buffer
	if err := r.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"day1: FAIL:", "FLOW FAILED the CAPI flow did not succeed (failed): driver: timed out"} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("text lacks %q:\n%s", want, text.String())
		}
	}

	c.Outcome, c.Errors = OutcomeSucceeded, nil
	r = mustBuild(t, []Pair{{Scenario: "day1", A: m, B: c}}, builtIn(t), DefaultOptions())
	if s := r.Scenarios[0]; !s.FlowFailed(FlowMAPI) || s.FlowFailed(FlowCAPI) || !reflect.DeepEqual(s.FailedFlows(), []Flow{FlowMAPI}) {
		t.Errorf("MAPI failed alone: %v", s.FailedFlows())
	}
}
