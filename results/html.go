package results

import (
	_ "embed"
	"fmt"
	"html/template"
	"io"
	"strings"
	"time"
)

//go:embed report.html.tmpl
var reportTemplate string

var htmlTemplate = template.Must(template.New("report").Funcs(template.FuncMap{
	"cellClass": cellClass,
	"pct":       func(f float64) string { return fmt.Sprintf("%.2f", f) },
	"times":     times,
	"join":      strings.Join,
	"plural":    plural,
}).Parse(reportTemplate))

// Verdict colours. The template sets its CSS variables from them, and both
// the matrix cells and the legend use those variables, so they cannot
// drift apart; the HTML tests find them in a screenshot and in computed
// styles.
const (
	colorParity     = "#2da44e"
	colorKnown      = "#e3b341"
	colorRegression = "#cf222e"
	colorAbsent     = "#d0d7de"
)

type htmlView struct {
	Title        string
	Summary      string
	Failed       bool
	FlowFailures []string
	Options      Options
	Colors       map[string]string
	Meta         []factRow
	Aspects      []string
	Matrix       []matrixRow
	Scenarios    []scenarioView
	Stale        []EntryResult
	Reproduced   []EntryResult
	Idle         []EntryResult
}

// matrixRow is one scenario of the matrix; Failed are the headlines of
// its failed flows (the row's title), FailedFlows their short names.
type matrixRow struct {
	Scenario    string
	Anchor      string
	Failed      []string
	FailedFlows []string
	Cells       []matrixCell
}

type matrixCell struct {
	Verdict Verdict
	Title   string
	Anchor  string
}

type scenarioView struct {
	Name       string
	Anchor     string
	Sides      Sides
	Parity     int
	Known      int
	Regression int
	Failed     []string
	Facts      []pairFact
	Backends   []backendRow
	Milestones []milestoneRow
	Timeline   []timelineRow
	Aspects    []aspectView
	Objects    []flowObjects
}

// backendRow, timelineRow and the other rows' MAPI and CAPI are side A
// and side B.
type backendRow struct {
	Component, MAPI, CAPI string
	Differs               bool
}

type timelineRow struct {
	Phase      string
	MAPI, CAPI *bar
}

type bar struct {
	Left, Width float64
	Label       string
}

// WriteHTML writes a self-contained HTML report: inline CSS and script, no
// external resources, readable offline.
func (r *Report) WriteHTML(w io.Writer) error {
	if err := htmlTemplate.Execute(w, r.htmlView()); err != nil {
		return fmt.Errorf("write html report: %w", err)
	}
	return nil
}

func (r *Report) htmlView() htmlView {
	v := htmlView{
		Title: r.comparison(), Summary: r.Summary(), Failed: r.Failed(), Options: r.Options, Aspects: r.AspectNames(),
		Colors: map[string]string{"Parity": colorParity, "KnownDivergence": colorKnown, "Regression": colorRegression, "Absent": colorAbsent},
		Meta:   runFacts(r.Scenarios),
	}
	for _, s := range r.Scenarios {
		for _, line := range flowFailedLines(s) {
			v.FlowFailures = append(v.FlowFailures, s.Scenario+": "+line)
		}
		v.Matrix = append(v.Matrix, matrixRowOf(s, v.Aspects))
		v.Scenarios = append(v.Scenarios, scenarioViewOf(s))
	}
	for _, e := range r.Entries {
		switch e.Status {
		case Stale:
			v.Stale = append(v.Stale, e)
		case Reproduced:
			v.Reproduced = append(v.Reproduced, e)
		default:
			v.Idle = append(v.Idle, e)
		}
	}
	return v
}

func matrixRowOf(s ScenarioResult, aspects []string) matrixRow {
	mr := matrixRow{Scenario: s.Scenario, Anchor: anchor("s", s.Scenario, ""), Failed: flowFailedLines(s)}
	for _, f := range s.FailedFlows() {
		mr.FailedFlows = append(mr.FailedFlows, s.Sides().Title(f))
	}
	for _, name := range aspects {
		a, ok := s.Aspect(name)
		if !ok {
			mr.Cells = append(mr.Cells, matrixCell{Title: s.Scenario + " · " + name + ": not observed"})
			continue
		}
		mr.Cells = append(mr.Cells, matrixCell{Verdict: a.Verdict, Title: s.Scenario + " · " + name + ": " + string(a.Verdict), Anchor: anchor("d", s.Scenario, name)})
	}
	return mr
}

func cellClass(v Verdict) string {
	switch v {
	case Parity:
		return "p"
	case KnownDivergence:
		return "k"
	case Regression:
		return "r"
	}
	return "n"
}

func scenarioViewOf(s ScenarioResult) scenarioView {
	sv := scenarioView{
		Name: s.Scenario, Anchor: anchor("s", s.Scenario, ""), Sides: s.Sides(),
		Parity: s.Count(Parity), Known: s.Count(KnownDivergence), Regression: s.Count(Regression),
		Failed: flowFailedLines(s), Facts: pairFacts(s), Milestones: milestoneRows(s),
		Timeline: timeline(s.A, s.B), Aspects: aspectViews(s), Objects: flowObjectsOf(s),
	}
	differs := map[string]bool{}
	for _, k := range differingBackends(s.A, s.B) {
		differs[k] = true
	}
	comps := map[string]bool{}
	for _, o := range []*Observation{s.A, s.B} {
		if o != nil {
			for k := range o.Backends {
				comps[k] = true
			}
		}
	}
	for _, k := range sortedKeys(comps) {
		sv.Backends = append(sv.Backends, backendRow{Component: k, MAPI: backendOf(s.A, k), CAPI: backendOf(s.B, k), Differs: differs[k]})
	}
	return sv
}

func backendOf(o *Observation, component string) string {
	if o == nil || o.Backends[component] == "" {
		return "-"
	}
	return o.Backends[component]
}

// timeline lays both flows' phases on one time axis: bars are offsets and
// widths in percent of the longer run.
func timeline(m, c *Observation) []timelineRow {
	scale := max(runDuration(m), runDuration(c))
	if scale <= 0 {
		return nil
	}
	out := []timelineRow{{Phase: "total", MAPI: runBar(m, scale), CAPI: runBar(c, scale)}}
	for _, name := range phaseNames(m, c) {
		out = append(out, timelineRow{Phase: name, MAPI: phaseBar(m, name, scale), CAPI: phaseBar(c, name, scale)})
	}
	return out
}

func runDuration(o *Observation) time.Duration {
	if o == nil {
		return 0
	}
	return o.FinishedAt.Sub(o.StartedAt)
}

func runBar(o *Observation, scale time.Duration) *bar {
	if o == nil {
		return nil
	}
	d := runDuration(o)
	return &bar{Left: 0, Width: 100 * float64(d) / float64(scale), Label: formatDuration(d)}
}

func phaseBar(o *Observation, name string, scale time.Duration) *bar {
	if o == nil {
		return nil
	}
	for _, p := range o.Phases() {
		if p.Name == name {
			left := 100 * float64(p.Start.Sub(o.StartedAt)) / float64(scale)
			width := 100 * float64(p.Duration()) / float64(scale)
			return &bar{Left: clamp(left), Width: clamp(width), Label: formatDuration(p.Duration())}
		}
	}
	return nil
}

func clamp(f float64) float64 { return min(100, max(0, f)) }

// phaseNames lists the phases of both flows, side A's order first.
func phaseNames(m, c *Observation) []string {
	var names []string
	seen := map[string]bool{}
	for _, o := range []*Observation{m, c} {
		if o == nil {
			continue
		}
		for _, p := range o.Phases() {
			if !seen[p.Name] {
				seen[p.Name] = true
				names = append(names, p.Name)
			}
		}
	}
	return names
}

// anchor builds an HTML id from a kind and names.
func anchor(kind, scenario, aspect string) string {
	clean := func(s string) string {
		return strings.Map(func(r rune) rune {
			if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' {
				return r
			}
			return '_'
		}, s)
	}
	id := kind + "-" + clean(scenario)
	if aspect != "" {
		id += "--" + clean(aspect)
	}
	return id
}
