package main

import (
	"fmt"
	"io"
	"maps"
	"strings"
	"time"

	"github.com/paritylab/paritylab/results"
)

// summary is the outcome of a soak.
type summary struct {
	runs []run
	// reference is the first passing run, which the others are compared
	// with; nil when no run passed.
	reference *run
	// flaky marks the runs that count as flakes, by index.
	flaky  []bool
	flakes int
}

func summarise(runs []run) summary {
	s := summary{runs: runs, flaky: make([]bool, len(runs))}
	for i := range runs {
		if runs[i].passed() {
			s.reference = &runs[i]
			break
		}
	}
	// A passing run compares with the reference, which then exists.
	for i, r := range runs {
		s.flaky[i] = !r.passed() || !sameResult(*r.verdict, *s.reference.verdict)
		if s.flaky[i] {
			s.flakes++
		}
	}
	return s
}

// sameResult compares what a flake changes: the verdict and the aspect
// counts, in total and per scenario. The flows' outcomes and durations
// vary from run to run without the result changing.
func sameResult(a, b results.RunVerdict) bool {
	type counts struct{ parity, known, regression int }
	perScenario := func(v results.RunVerdict) map[string]counts {
		m := map[string]counts{}
		for name, s := range v.Scenarios {
			m[name] = counts{s.Parity, s.Known, s.Regression}
		}
		return m
	}
	return a.Verdict == b.Verdict && a.Parity == b.Parity && a.Known == b.Known && a.Regression == b.Regression &&
		a.Stale == b.Stale && maps.Equal(perScenario(a), perScenario(b))
}

func (s summary) write(w io.Writer) error {
	var b strings.Builder
	for i, r := range s.runs {
		fmt.Fprintf(&b, "%-7s %s\n", r.name, s.runLine(i))
	}
	fmt.Fprintln(&b, s.finalLine())
	if _, err := io.WriteString(w, b.String()); err != nil {
		return fmt.Errorf("write summary: %w", err)
	}
	return nil
}

func (s summary) runLine(i int) string {
	r := s.runs[i]
	if !r.recorded {
		return "FAIL  cannot read the run: " + r.problem
	}
	outcome := "FAIL"
	if r.passed() {
		outcome = "PASS"
	}
	var line string
	switch {
	case r.verdict == nil && r.problem != "":
		line = outcome + "  unreadable verdict"
	case r.verdict == nil:
		line = fmt.Sprintf("%s  no verdict: the suite stopped before it wrote %s", outcome, results.VerdictFile)
	default:
		line = fmt.Sprintf("%s  parity %d  known %d  regression %d", outcome, r.verdict.Parity, r.verdict.Known, r.verdict.Regression)
	}
	line += "  duration " + r.took.Round(time.Second).String()
	var notes []string
	if r.exitCode != 0 {
		notes = append(notes, fmt.Sprintf("make exit status %d", r.exitCode))
	}
	if r.problem != "" {
		notes = append(notes, r.problem)
	}
	if r.passed() && s.flaky[i] {
		notes = append(notes, "result differs from "+s.reference.name)
	}
	if len(notes) > 0 {
		line += "  (" + strings.Join(notes, "; ") + ")"
	}
	return line
}

func (s summary) finalLine() string {
	passed := 0
	for _, r := range s.runs {
		if r.passed() {
			passed++
		}
	}
	if s.reference == nil {
		return fmt.Sprintf("soak: %d run(s), none passed; flakes: %d", len(s.runs), s.flakes)
	}
	return fmt.Sprintf("soak: %d run(s), %d passed; flakes: %d (failed, or verdict or aspect counts differ from %s)",
		len(s.runs), passed, s.flakes, s.reference.name)
}
