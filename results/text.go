package results

import (
	"fmt"
	"io"
	"strings"
)

// WriteText writes the terminal summary: the verdict, one line per
// scenario, every regression with its side-by-side view, the known
// divergences met in one line each, and stale registry entries.
func (r *Report) WriteText(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "%s\n", r.Summary())
	for _, s := range r.Scenarios {
		fmt.Fprintf(&b, "\n%s: %s: %d parity, %d known divergence(s), %d regression(s)\n",
			s.Scenario, scenarioVerdict(s), s.Count(Parity), s.Count(KnownDivergence), s.Count(Regression))
		for _, f := range s.FailedFlows() {
			fmt.Fprintf(&b, "  FLOW FAILED %s\n", s.FlowFailure(f))
		}
		sides := s.Sides()
		fmt.Fprintf(&b, "  %s backends: %s\n  %s backends: %s\n", sides.TitleA, backendLine(s.A), sides.TitleB, backendLine(s.B))
		for _, a := range s.Aspects {
			switch a.Verdict {
			case KnownDivergence:
				fmt.Fprintf(&b, "  known       %-36s %s\n", a.Aspect, entryIDs(a.Known))
			case Regression:
				msg := regressionMessage(sides, a)
				fmt.Fprintf(&b, "  REGRESSION  %s: %s\n", a.Aspect, msg)
				if a.Aspect != observationAspect {
					fmt.Fprintf(&b, "%s\n", indent(sideBySide(sides, a), "      "))
				}
				if a.Note != "" && !strings.Contains(msg, a.Note) {
					fmt.Fprintf(&b, "      %s\n", a.Note)
				}
			}
		}
	}
	for _, e := range r.StaleEntries() {
		fmt.Fprintf(&b, "\nSTALE %s\n", staleMessage(e))
	}
	if _, err := io.WriteString(w, b.String()); err != nil {
		return fmt.Errorf("write summary: %w", err)
	}
	return nil
}

// scenarioVerdict is PASS, or FAIL when a flow did not succeed or an
// aspect regressed.
func scenarioVerdict(s ScenarioResult) string {
	if s.Failed() {
		return "FAIL"
	}
	return "PASS"
}

func entryIDs(es []*Entry) string {
	ids := make([]string, 0, len(es))
	for _, e := range es {
		ids = append(ids, e.ID)
	}
	return strings.Join(ids, ", ")
}

func indent(s, prefix string) string {
	return prefix + strings.ReplaceAll(s, "\n", "\n"+prefix)
}
