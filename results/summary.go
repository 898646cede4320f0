package results

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"
)

// SummaryPaths are the report files WriteSummary points people to; empty
// ones are left out. Pass absolute paths: the summary is read after the
// run, from wherever its reader is.
type SummaryPaths struct {
	HTML, Markdown, JUnit string
}

// WriteSummary writes the end-of-run summary (SummaryFile): a table of
// every scenario's flows with the flow's outcome, the scenario's aspect
// counts and the flow's duration, then one line per regressed aspect
// (what differs, quoted briefly), the verdict line and where the reports
// are. It is what `make e2e-parity` prints last, so a reader sees the
// result, and what to look at when it fails, without scrolling through
// the run's log: a CI system that keeps only the output's tail keeps it.
func (r *Report) WriteSummary(w io.Writer, paths SummaryPaths) error {
	var b strings.Builder
	b.WriteString("Parity summary\n")
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "SCENARIO\tFLOW\tOUTCOME\tPARITY\tKNOWN\tREGRESSION\tDURATION")
	for _, s := range r.Scenarios {
		counts := fmt.Sprintf("%d\t%d\t%d", s.Count(Parity), s.Count(KnownDivergence), s.Count(Regression))
		for _, f := range s.Sides().Flows() {
			o := s.Observation(f)
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", s.Scenario, f, flowOutcome(o), counts, flowDuration(o))
		}
	}
	if err := tw.Flush(); err != nil {
		return fmt.Errorf("write summary table: %w", err)
	}
	writeRegressions(&b, r.Scenarios)
	fmt.Fprintf(&b, "\n%s\n", r.Summary())
	writePaths(&b, paths)
	if _, err := io.WriteString(w, b.String()); err != nil {
		return fmt.Errorf("write summary: %w", err)
	}
	return nil
}

// writeRegressions lists every regressed aspect, a line each, with the
// message its JUnit failure carries (regressionMessage).
func writeRegressions(b *strings.Builder, scenarios []ScenarioResult) {
	first := true
	for _, s := range scenarios {
		for _, a := range s.Aspects {
			if a.Verdict != Regression {
				continue
			}
			if first {
				b.WriteString("\nRegressions\n")
				first = false
			}
			msg := regressionMessage(s.Sides(), a)
			if !strings.HasPrefix(msg, a.Aspect+" ") {
				msg = a.Aspect + ": " + msg
			}
			fmt.Fprintf(b, "%s: %s\n", s.Scenario, msg)
		}
	}
}

func writePaths(b *strings.Builder, paths SummaryPaths) {
	label := "Report:"
	for _, p := range []string{paths.HTML, paths.Markdown, paths.JUnit} {
		if p == "" {
			continue
		}
		fmt.Fprintf(b, "%-7s %s\n", label, p)
		label = ""
	}
}

// flowOutcome is how a flow ended; a flow that left no observation has no
// outcome to show, which the table must say rather than leave blank.
func flowOutcome(o *Observation) string {
	switch {
	case o == nil:
		return "no observation"
	case o.Outcome == "":
		return "-"
	}
	return string(o.Outcome)
}

func flowDuration(o *Observation) string {
	if o == nil || o.StartedAt.IsZero() || o.FinishedAt.IsZero() {
		return "-"
	}
	d := o.FinishedAt.Sub(o.StartedAt)
	if d >= time.Minute {
		return d.Round(time.Second).String()
	}
	return d.Round(100 * time.Millisecond).String()
}

// RunVerdict is the verdict of a run and its aspect counts (VerdictFile),
// for scripts that compare runs, e.g. the soak loop's flake count.
type RunVerdict struct {
	// Verdict is PASS or FAIL (Report.Verdict).
	Verdict string `json:"verdict"`
	// Parity, Known and Regression count the aspects of every scenario.
	Parity     int `json:"parity"`
	Known      int `json:"known"`
	Regression int `json:"regression"`
	// Stale counts the registry entries that no longer reproduce.
	Stale int `json:"stale"`
	// Scenarios are each scenario's counts, by scenario name.
	Scenarios map[string]ScenarioVerdict `json:"scenarios"`
}

// ScenarioVerdict is one scenario's part of a RunVerdict.
type ScenarioVerdict struct {
	Parity     int `json:"parity"`
	Known      int `json:"known"`
	Regression int `json:"regression"`
	// Outcomes are how each flow ended; a flow that left no
	// observation is absent.
	Outcomes map[Flow]Outcome `json:"outcomes"`
}

// RunVerdict sums the report up for scripts.
func (r *Report) RunVerdict() RunVerdict {
	c := r.Counts()
	v := RunVerdict{Verdict: r.Verdict(), Parity: c.Parity, Known: c.KnownDivergence, Regression: c.Regression, Stale: c.Stale,
		Scenarios: map[string]ScenarioVerdict{}}
	for _, s := range r.Scenarios {
		sv := ScenarioVerdict{Parity: s.Count(Parity), Known: s.Count(KnownDivergence), Regression: s.Count(Regression), Outcomes: map[Flow]Outcome{}}
		for _, f := range s.Sides().Flows() {
			if o := s.Observation(f); o != nil {
				sv.Outcomes[f] = o.Outcome
			}
		}
		v.Scenarios[s.Scenario] = sv
	}
	return v
}

// WriteVerdict writes RunVerdict as indented JSON (VerdictFile).
func (r *Report) WriteVerdict(w io.Writer) error {
	raw, err := json.MarshalIndent(r.RunVerdict(), "", "  ")
	if err != nil {
		return fmt.Errorf("encode verdict: %w", err)
	}
	if _, err := w.Write(append(raw, '\n')); err != nil {
		return fmt.Errorf("write verdict: %w", err)
	}
	return nil
}
