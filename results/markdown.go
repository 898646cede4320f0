package results

import (
	"fmt"
	"io"
	"strings"
)

// WriteMarkdown writes a summary people read in a PR comment or a job
// page: the verdict, a row per scenario, every regression with its
// side-by-side view, the known divergences met, and the registry's health.
func (r *Report) WriteMarkdown(w io.Writer) error {
	var b strings.Builder
	r.mdSummary(&b)
	r.mdScenarios(&b)
	r.mdRegressions(&b)
	r.mdKnown(&b)
	r.mdRegistry(&b)
	if _, err := io.WriteString(w, b.String()); err != nil {
		return fmt.Errorf("write markdown: %w", err)
	}
	return nil
}

// Verdict returns the run's one-word verdict.
func (r *Report) Verdict() string {
	if r.Failed() {
		return "FAIL"
	}
	return "PASS"
}

// Summary returns the one-line summary of the report.
func (r *Report) Summary() string {
	c := r.Counts()
	return fmt.Sprintf("%s: %d scenario(s), %d aspect(s): %d parity, %d known divergence(s), %d regression(s); registry: %d reproduced, %d stale, %d not exercised",
		r.Verdict(), c.Scenarios, c.Aspects, c.Parity, c.KnownDivergence, c.Regression, c.Reproduced, c.Stale, c.NotExercised)
}

func (r *Report) mdSummary(b *strings.Builder) {
	b.WriteString("# MAPI vs CAPI parity\n\n")
	fmt.Fprintf(b, "**%s**\n\n", r.Summary())
	fmt.Fprintf(b, "Durations count as parity within %.2f× or ±%s.\n\n", r.Options.DurationRatio, r.Options.DurationSlack)
}

func (r *Report) mdScenarios(b *strings.Builder) {
	b.WriteString("## Scenarios\n\n")
	b.WriteString("| scenario | verdict | parity | known | regressions | MAPI backends | CAPI backends | MAPI time | CAPI time |\n")
	b.WriteString("|---|---|---:|---:|---:|---|---|---:|---:|\n")
	for _, s := range r.Scenarios {
		verdict := "PASS"
		if s.Count(Regression) > 0 {
			verdict = "**FAIL**"
		}
		fmt.Fprintf(b, "| %s | %s | %d | %d | %d | %s | %s | %s | %s |\n",
			mdCell(s.Scenario), verdict, s.Count(Parity), s.Count(KnownDivergence), s.Count(Regression),
			mdCell(backendLine(s.MAPI)), mdCell(backendLine(s.CAPI)), runTime(s.MAPI), runTime(s.CAPI))
	}
	b.WriteString("\n")
	for _, s := range r.Scenarios {
		if diff := backendDifferences(s.MAPI, s.CAPI); diff != "" {
			fmt.Fprintf(b, "- %s: components the flows implement differently: %s.\n", s.Scenario, diff)
		}
	}
}

func (r *Report) mdRegressions(b *strings.Builder) {
	b.WriteString("\n## Regressions\n\n")
	n := 0
	for _, s := range r.Scenarios {
		for _, a := range s.Aspects {
			if a.Verdict != Regression {
				continue
			}
			n++
			fmt.Fprintf(b, "### %s: %s\n\n%s.\n\n", s.Scenario, a.Aspect, regressionMessage(a))
			if a.Aspect != "observation" {
				fmt.Fprintf(b, "```\n%s\n```\n\n", sideBySide(a))
			}
			if a.Note != "" && a.Aspect != "observation" {
				fmt.Fprintf(b, "%s\n\n", a.Note)
			}
		}
	}
	if n == 0 {
		b.WriteString("None.\n\n")
	}
}

func (r *Report) mdKnown(b *strings.Builder) {
	b.WriteString("## Known divergences\n\n")
	var rowsOut []string
	for _, s := range r.Scenarios {
		for _, a := range s.Aspects {
			if a.Verdict != KnownDivergence {
				continue
			}
			for _, e := range a.Known {
				rowsOut = append(rowsOut, fmt.Sprintf("| %s | %s | `%s` | %s | %s |",
					mdCell(s.Scenario), mdCell(a.Aspect), e.ID, mdCell(e.Summary), mdRefs(e.Upstream)))
			}
		}
	}
	if len(rowsOut) == 0 {
		b.WriteString("None.\n\n")
		return
	}
	b.WriteString("| scenario | aspect | entry | why | upstream |\n|---|---|---|---|---|\n")
	b.WriteString(strings.Join(rowsOut, "\n") + "\n\n")
}

func (r *Report) mdRegistry(b *strings.Builder) {
	b.WriteString("## Known-divergence registry\n\n")
	stale := r.StaleEntries()
	if len(stale) == 0 {
		b.WriteString("No stale entries.\n\n")
	} else {
		b.WriteString("Stale entries: the difference they explain no longer shows. Remove or narrow them.\n\n")
		for _, e := range stale {
			fmt.Fprintf(b, "- **STALE** `%s` (%s): %s\n", e.Entry.ID, mdCell(e.Entry.Summary), staleMessage(e))
		}
		b.WriteString("\n")
	}
	var idle []string
	for _, e := range r.Entries {
		if e.Status == NotExercised {
			idle = append(idle, "`"+e.Entry.ID+"`")
		}
	}
	if len(idle) > 0 {
		fmt.Fprintf(b, "Not exercised by this run: %s.\n", strings.Join(idle, ", "))
	}
}

func mdRefs(refs []Reference) string {
	parts := make([]string, 0, len(refs))
	for _, ref := range refs {
		label := ref.Repository
		if label == "" {
			label = "doc"
		}
		parts = append(parts, fmt.Sprintf("[%s](%s)", mdCell(label), ref.Link()))
	}
	return strings.Join(parts, ", ")
}

// mdCell makes text safe inside a Markdown table cell.
func mdCell(s string) string {
	s = strings.ReplaceAll(s, "|", `\|`)
	return strings.ReplaceAll(s, "\n", " ")
}

func runTime(o *Observation) string {
	if o == nil {
		return "-"
	}
	return formatDuration(o.FinishedAt.Sub(o.StartedAt))
}
