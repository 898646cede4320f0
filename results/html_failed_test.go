package results

import (
	"bytes"
	"html"
	"strings"
	"testing"
)

// failedDay1 is the real run's day1 pair with both flows failed alike:
// every aspect but the outcome agrees or is a known divergence, and the
// report must still be red.
func failedDay1(t *testing.T) *Report {
	t.Helper()
	m := readObservation(t, "testdata/real/day1.mapi.json")
	c := readObservation(t, "testdata/real/day1.capi.json")
	for _, o := range []*Observation{m, c} {
		o.Outcome = OutcomeTimedOut
		o.Errors = []Error{{Source: "driver", Message: "timed out waiting for 3 control-plane agents", At: o.FinishedAt}}
	}
	return mustBuild(t, []Pair{{Scenario: m.Scenario, A: m, B: c}}, builtIn(t), DefaultOptions())
}

func renderHTML(t *testing.T, r *Report) string {
	t.Helper()
	var buf bytes.Buffer
	if err := r.WriteHTML(&buf); err != nil {
		t.Fatal(err)
	}
	return html.UnescapeString(buf.String())
}

// A failed flow makes the header red and says so at the top of the
// report, of its scenario's section and in its matrix row.
func TestHTMLFailedFlowIsProminent(t *testing.T) {
	r := failedDay1(t)
	if !r.Failed() {
		t.Fatal("a run whose flows failed must fail")
	}
	page := renderHTML(t, r)
	line := "MAPI flow failed: driver: timed out waiting for 3 control-plane agents (outcome timedOut)"
	for name, want := range map[string]string{
		"red header":        `<header class="fail">`,
		"header line":       `<li class="flowfail">day1: ` + line + `</li>`,
		"CAPI header line":  `<li class="flowfail">day1: CAPI flow failed: driver:`,
		"section line":      `<p class="flowfail">` + line + `</p>`,
		"matrix row title":  `<th class="scn" title="` + line + `; CAPI flow failed`,
		"matrix row marker": `✗ MAPI flow failed</span>`,
	} {
		if !strings.Contains(page, want) {
			t.Errorf("%s: page lacks %q", name, want)
		}
	}
	if strings.Contains(page, `<header class="pass">`) {
		t.Error("header is green for a failed flow")
	}
}

func TestMarkdownFailedFlowIsProminent(t *testing.T) {
	var buf bytes.Buffer
	if err := failedDay1(t).WriteMarkdown(&buf); err != nil {
		t.Fatal(err)
	}
	md := buf.String()
	for _, want := range []string{
		"> **day1: MAPI flow failed: driver: timed out waiting for 3 control-plane agents (outcome timedOut)**",
		"### day1: FAIL\n\n> **MAPI flow failed: driver:",
		"| day1 | **FAIL** |",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("markdown lacks %q:\n%s", want, md)
		}
	}
}

// A flow that left no observation is named as failed too.
func TestFlowFailedLineWithoutObservation(t *testing.T) {
	m := readObservation(t, "testdata/acceptance/scale-sample.mapi.json")
	s := mustCompare(t, Pair{Scenario: m.Scenario, A: m}, nil, DefaultOptions())
	got := flowFailedLines(s)
	if len(got) != 1 || got[0] != "CAPI flow failed: it left no observation" {
		t.Fatalf("got %q", got)
	}
	if page := renderHTML(t, mustBuild(t, []Pair{{Scenario: m.Scenario, A: m}}, nil, DefaultOptions())); !strings.Contains(page, `<header class="fail">`) {
		t.Error("header is not red for a missing flow")
	}
}
