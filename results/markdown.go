package results

import (
	"fmt"
	"io"
	"strings"
)

// WriteMarkdown writes the report for a PR comment or a job page, with
// the HTML report's content except the object timelines: the verdict and
// failed flows, the run metadata, a row per scenario, per scenario its
// facts, milestones and every aspect's verdict, every regression and known
// divergence with its side-by-side view, and the registry's health.
func (r *Report) WriteMarkdown(w io.Writer) error {
	var b strings.Builder
	r.mdSummary(&b)
	r.mdRun(&b)
	r.mdScenarios(&b)
	for _, s := range r.Scenarios {
		mdScenario(&b, s)
	}
	r.mdRegressions(&b)
	r.mdKnown(&b)
	r.mdRegistry(&b)
	b.WriteString("\nObject timelines (every recorded object and host, with what happened to it) are in the HTML report only.\n")
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
	fmt.Fprintf(b, "# %s parity\n\n", r.comparison())
	fmt.Fprintf(b, "**%s**\n\n", r.Summary())
	for _, s := range r.Scenarios {
		for _, line := range flowFailedLines(s) {
			fmt.Fprintf(b, "> **%s: %s**\n\n", s.Scenario, line)
		}
	}
	fmt.Fprintf(b, "Durations count as parity within %.2f× or ±%s.\n\n", r.Options.DurationRatio, r.Options.DurationSlack)
}

func (r *Report) mdRun(b *strings.Builder) {
	facts := runFacts(r.Scenarios)
	if len(facts) == 0 {
		return
	}
	b.WriteString("## Run\n\n| fact | value |\n|---|---|\n")
	for _, f := range facts {
		values := make([]string, 0, len(f.Values))
		for _, v := range f.Values {
			if v.Where != "" {
				values = append(values, v.Value+" ("+v.Where+")")
				continue
			}
			values = append(values, v.Value)
		}
		fmt.Fprintf(b, "| %s | %s |\n", mdCell(f.Name), mdCell(strings.Join(values, " · ")))
	}
	b.WriteString("\n")
}

func (r *Report) mdScenarios(b *strings.Builder) {
	b.WriteString("## Scenarios\n\n")
	cols, legend := r.columnSides()
	b.WriteString(legend)
	fmt.Fprintf(b, "| scenario | verdict | parity | known | regressions | %[1]s backends | %[2]s backends | %[1]s time | %[2]s time |\n", cols.TitleA, cols.TitleB)
	b.WriteString("|---|---|---:|---:|---:|---|---|---:|---:|\n")
	for _, s := range r.Scenarios {
		verdict := scenarioVerdict(s)
		if s.Failed() {
			verdict = "**FAIL**"
		}
		fmt.Fprintf(b, "| %s | %s | %d | %d | %d | %s | %s | %s | %s |\n",
			mdCell(s.Scenario), verdict, s.Count(Parity), s.Count(KnownDivergence), s.Count(Regression),
			mdCell(backendLine(s.A)), mdCell(backendLine(s.B)), runTime(s.A), runTime(s.B))
	}
	b.WriteString("\n")
	for _, s := range r.Scenarios {
		if diff := backendDifferences(s); diff != "" {
			fmt.Fprintf(b, "- %s: components the flows implement differently: %s.\n", s.Scenario, diff)
		}
	}
}

// columnSides are the sides a table of every scenario names its columns
// after: the scenarios' own when they all compare the same flows, else
// "side A" and "side B", which the legend says scenario by scenario.
func (r *Report) columnSides() (cols Sides, legend string) {
	all := distinctSides(r.Scenarios)
	if len(all) == 1 {
		return all[0], ""
	}
	parts := make([]string, 0, len(all))
	for _, sides := range all {
		var names []string
		for _, s := range r.Scenarios {
			if s.Sides() == sides {
				names = append(names, s.Scenario)
			}
		}
		parts = append(parts, fmt.Sprintf("%s and %s in %s", sides.TitleA, sides.TitleB, strings.Join(names, ", ")))
	}
	return Sides{TitleA: "side A", TitleB: "side B"}, "Side A and side B are " + strings.Join(parts, "; ") + ".\n\n"
}

// mdScenario is one scenario: its failed flows, what each flow ran on,
// its milestones and every aspect's verdict with what it was decided on.
func mdScenario(b *strings.Builder, s ScenarioResult) {
	fmt.Fprintf(b, "\n### %s: %s\n\n", s.Scenario, scenarioVerdict(s))
	for _, line := range flowFailedLines(s) {
		fmt.Fprintf(b, "> **%s**\n\n", line)
	}
	sides := s.Sides()
	fmt.Fprintf(b, "| fact | %s flow | %s flow |\n|---|---|---|\n", sides.TitleA, sides.TitleB)
	for _, f := range pairFacts(s) {
		capi := f.CAPI
		if f.Same {
			capi = "(same)"
		}
		fmt.Fprintf(b, "| %s | %s | %s |\n", mdCell(f.Name), mdCell(f.MAPI), mdCell(capi))
	}
	if ms := milestoneRows(s); len(ms) > 0 {
		fmt.Fprintf(b, "\n| milestone | %[1]s | %[2]s | delta (%[2]s − %[1]s) | ratio (%[2]s/%[1]s) | verdict |\n|---|---:|---:|---:|---:|---|\n", sides.TitleA, sides.TitleB)
		for _, m := range ms {
			fmt.Fprintf(b, "| %s: %s | %s | %s | %s | %s | %s |\n", mdCell(m.Name), mdCell(m.Description),
				m.MAPI, m.CAPI, orWord(m.Delta, "—"), orWord(m.Ratio, "—"), mdVerdict(m.Verdict))
		}
	}
	b.WriteString("\n| aspect | verdict | decided on |\n|---|---|---|\n")
	for _, a := range s.Aspects {
		fmt.Fprintf(b, "| %s | %s | %s |\n", mdCell(a.Aspect), mdVerdict(a.Verdict), mdCell(decidedOn(sides, a)))
	}
}

// mdVerdict makes a regression stand out; "—" is a milestone no flow
// reached.
func mdVerdict(v Verdict) string {
	switch v {
	case "":
		return "—"
	case Regression:
		return "**Regression**"
	}
	return string(v)
}

// decidedOn says what a parity verdict rests on (the first lines both
// flows have, with repeat counts), or where a difference is detailed.
func decidedOn(sides Sides, a AspectResult) string {
	switch {
	case isDurationAspect(a):
		return aspectHint(sides, a)
	case a.Verdict == Regression:
		return aspectHint(sides, a) + "; see Regressions"
	case a.Verdict == KnownDivergence:
		return aspectHint(sides, a) + "; see Known divergences"
	}
	const shown = 3
	var lines []string
	for _, r := range lineRows(a) {
		lines = append(lines, r.Both)
	}
	if len(lines) == 0 {
		return "no lines in either flow"
	}
	if len(lines) > shown {
		lines = append(lines[:shown], fmt.Sprintf("… %d more", len(lines)-shown))
	}
	return strings.Join(lines, "; ")
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
			fmt.Fprintf(b, "### %s: %s\n\n%s.\n\n", s.Scenario, a.Aspect, regressionMessage(s.Sides(), a))
			if a.Aspect != "observation" {
				fmt.Fprintf(b, "```\n%s\n```\n\n", sideBySide(s.Sides(), a))
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
	var details strings.Builder
	for _, s := range r.Scenarios {
		for _, a := range s.Aspects {
			if a.Verdict != KnownDivergence {
				continue
			}
			for _, e := range a.Known {
				rowsOut = append(rowsOut, fmt.Sprintf("| %s | %s | `%s` | %s | %s |",
					mdCell(s.Scenario), mdCell(a.Aspect), e.ID, mdCell(e.Summary), mdRefs(e.Upstream)))
			}
			// Collapsed where the renderer supports it (GitHub), plain
			// text elsewhere.
			fmt.Fprintf(&details, "<details><summary>%s: %s</summary>\n\n```\n%s\n```\n\n", s.Scenario, a.Aspect, sideBySide(s.Sides(), a))
			if a.Note != "" {
				fmt.Fprintf(&details, "%s\n\n", a.Note)
			}
			details.WriteString("</details>\n\n")
		}
	}
	if len(rowsOut) == 0 {
		b.WriteString("None.\n\n")
		return
	}
	b.WriteString("| scenario | aspect | entry | why | upstream |\n|---|---|---|---|---|\n")
	b.WriteString(strings.Join(rowsOut, "\n") + "\n\n")
	b.WriteString(details.String())
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
