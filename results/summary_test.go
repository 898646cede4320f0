package results

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// summaryReport is a small handmade run: day1 where both flows succeeded
// with one known divergence, day2-scale where the CAPI flow failed and
// one aspect regressed, and a scenario whose CAPI flow left nothing.
func summaryReport() *Report {
	t0 := time.Date(2025, 3, 1, 10, 0, 0, 0, time.UTC)
	obs := func(flow Flow, outcome Outcome, took time.Duration) *Observation {
		return &Observation{Flow: flow, Outcome: outcome, StartedAt: t0, FinishedAt: t0.Add(took)}
	}
	aspects := func(vs ...Verdict) []AspectResult {
		var out []AspectResult
		for i, v := range vs {
			out = append(out, AspectResult{Aspect: "a" + string(rune('0'+i)), Verdict: v})
		}
		return out
	}
	regressed := AspectResult{Aspect: "nodes/ready", Verdict: Regression, MAPI: []string{"Ready (×3)"}, CAPI: []string{"NotReady", "Ready (×2)"},
		OnlyMAPI: []string{"Ready (×3)"}, OnlyCAPI: []string{"NotReady", "Ready (×2)"},
		UnexplainedMAPI: []string{"Ready (×3)"}, UnexplainedCAPI: []string{"NotReady", "Ready (×2)"}}
	return &Report{Scenarios: []ScenarioResult{
		{Scenario: "day1", A: obs(FlowMAPI, OutcomeSucceeded, 23*time.Minute+4400*time.Millisecond), B: obs(FlowCAPI, OutcomeSucceeded, 25*time.Minute),
			Aspects: aspects(Parity, Parity, Parity, KnownDivergence)},
		{Scenario: "day2-scale", A: obs(FlowMAPI, OutcomeSucceeded, 9*time.Minute), B: obs(FlowCAPI, OutcomeFailed, 42300*time.Millisecond),
			Aspects: append(aspects(Parity), regressed)},
		{Scenario: "remediation", A: &Observation{Flow: FlowMAPI, Outcome: OutcomeTimedOut, StartedAt: t0},
			Aspects: []AspectResult{{Aspect: observationAspect, Verdict: Regression, Note: "the CAPI flow left no observation"}}},
	}}
}

func TestWriteSummary(t *testing.T) {
	r := summaryReport()
	var out bytes.Buffer
	err := r.WriteSummary(&out, SummaryPaths{HTML: "/art/report.html", Markdown: "/art/report.md"})
	if err != nil {
		t.Fatal(err)
	}
	want := `Parity summary
SCENARIO     FLOW  OUTCOME         PARITY  KNOWN  REGRESSION  DURATION
day1         mapi  succeeded       3       1      0           23m4s
day1         capi  succeeded       3       1      0           25m0s
day2-scale   mapi  succeeded       1       0      1           9m0s
day2-scale   capi  failed          1       0      1           42.3s
remediation  mapi  timedOut        0       0      1           -
remediation  capi  no observation  0       0      1           -

Regressions
day2-scale: nodes/ready differs and no known divergence explains it: MAPI has "Ready (×3)" that CAPI lacks; CAPI has "NotReady", "Ready (×2)" that MAPI lacks
remediation: observation: the CAPI flow left no observation

` + r.Summary() + `
Report: /art/report.html
        /art/report.md
`
	if out.String() != want {
		t.Errorf("summary:\n%s\nwant:\n%s", out.String(), want)
	}
	if !strings.HasPrefix(r.Summary(), "FAIL: 3 scenario(s)") {
		t.Errorf("verdict line %q, want the failing verdict of 3 scenarios", r.Summary())
	}
	t.Logf("summary:\n%s", out.String())
}

func TestWriteSummaryPassingRunWithoutPaths(t *testing.T) {
	r := summaryReport()
	r.Scenarios = r.Scenarios[:1]
	var out bytes.Buffer
	if err := r.WriteSummary(&out, SummaryPaths{}); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if last := lines[len(lines)-1]; !strings.HasPrefix(last, "PASS: 1 scenario(s)") {
		t.Errorf("last line %q, want the verdict when no report path is given", last)
	}
	if strings.Contains(out.String(), "Regressions") {
		t.Errorf("summary of a run without regressions lists some:\n%s", out.String())
	}
	if strings.Contains(out.String(), "Report:") {
		t.Errorf("summary names a report although none was given:\n%s", out.String())
	}
}

func TestWriteVerdict(t *testing.T) {
	var out bytes.Buffer
	if err := summaryReport().WriteVerdict(&out); err != nil {
		t.Fatal(err)
	}
	var got RunVerdict
	if err := json.Unmarshal(out.Bytes(), &got); err != nil {
		t.Fatalf("verdict is not JSON: %v\n%s", err, out.String())
	}
	if got.Verdict != "FAIL" || got.Parity != 4 || got.Known != 1 || got.Regression != 2 || got.Stale != 0 {
		t.Errorf("totals %+v", got)
	}
	day2 := got.Scenarios["day2-scale"]
	if day2.Parity != 1 || day2.Regression != 1 || day2.Outcomes[FlowCAPI] != OutcomeFailed || day2.Outcomes[FlowMAPI] != OutcomeSucceeded {
		t.Errorf("day2-scale %+v", day2)
	}
	if _, ok := got.Scenarios["remediation"].Outcomes[FlowCAPI]; ok || len(got.Scenarios) != 3 {
		t.Errorf("scenarios %+v: a flow without observation must have no outcome", got.Scenarios)
	}
	for _, key := range []string{`"verdict": "FAIL"`, `"parity": 4`, `"known": 1`, `"regression": 2`, `"scenarios": {`} {
		if !strings.Contains(out.String(), key) {
			t.Errorf("verdict.json lacks %s:\n%s", key, out.String())
		}
	}
}
