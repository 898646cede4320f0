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
		fmt.Fprintf(&b, "\n%s: %d parity, %d known divergence(s), %d regression(s)\n",
			s.Scenario, s.Count(Parity), s.Count(KnownDivergence), s.Count(Regression))
		fmt.Fprintf(&b, "  MAPI backends: %s\n  CAPI backends: %s\n", backendLine(s.MAPI), backendLine(s.CAPI))
		for _, a := range s.Aspects {
			switch a.Verdict {
			case KnownDivergence:
				fmt.Fprintf(&b, "  known       %-36s %s\n", a.Aspect, entryIDs(a.Known))
			case Regression:
				fmt.Fprintf(&b, "  REGRESSION  %s: %s\n", a.Aspect, regressionMessage(a))
				if a.Aspect != "observation" {
					fmt.Fprintf(&b, "%s\n", indent(sideBySide(a), "      "))
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
