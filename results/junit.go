package results

import (
	"encoding/xml"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// JUnit documents follow what Prow/Spyglass, TestGrid and Jenkins read: a
// <testsuites> root, one <testsuite> per scenario with a <testcase> per
// aspect, and one suite for the known-divergence registry.

type junitSuites struct {
	XMLName  xml.Name     `xml:"testsuites"`
	Name     string       `xml:"name,attr"`
	Tests    int          `xml:"tests,attr"`
	Failures int          `xml:"failures,attr"`
	Errors   int          `xml:"errors,attr"`
	Time     string       `xml:"time,attr"`
	Suites   []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name       string          `xml:"name,attr"`
	Tests      int             `xml:"tests,attr"`
	Failures   int             `xml:"failures,attr"`
	Errors     int             `xml:"errors,attr"`
	Skipped    int             `xml:"skipped,attr"`
	Time       string          `xml:"time,attr"`
	Timestamp  string          `xml:"timestamp,attr,omitempty"`
	Properties *junitProps     `xml:"properties,omitempty"`
	Cases      []junitTestCase `xml:"testcase"`
}

type junitProps struct {
	Props []junitProp `xml:"property"`
}

type junitProp struct {
	Name  string `xml:"name,attr"`
	Value string `xml:"value,attr"`
}

type junitTestCase struct {
	Name      string        `xml:"name,attr"`
	Classname string        `xml:"classname,attr"`
	Time      string        `xml:"time,attr"`
	Skipped   *junitMessage `xml:"skipped,omitempty"`
	Failure   *junitMessage `xml:"failure,omitempty"`
	SystemOut *junitText    `xml:"system-out,omitempty"`
}

// junitText is element text written as CDATA so that side-by-side views
// stay readable in the raw file.
type junitText struct {
	Text string `xml:",cdata"`
}

func cdata(s string) *junitText { return &junitText{Text: xmlSafe(s)} }

type junitMessage struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr,omitempty"`
	Body    string `xml:",cdata"`
}

// registrySuite names the JUnit suite of the known-divergence registry.
const registrySuite = "paritylab known divergences"

// WriteJUnit writes the report as JUnit XML.
func (r *Report) WriteJUnit(w io.Writer) error {
	doc := junitSuites{Name: "paritylab"}
	total := 0.0
	for _, s := range r.Scenarios {
		suite := scenarioSuite(s)
		doc.Suites = append(doc.Suites, suite)
		total += runSeconds(s.A) + runSeconds(s.B)
	}
	if len(r.Entries) > 0 {
		doc.Suites = append(doc.Suites, r.registrySuite())
	}
	for _, s := range doc.Suites {
		doc.Tests += s.Tests
		doc.Failures += s.Failures
	}
	doc.Time = seconds(total)
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return fmt.Errorf("write junit: %w", err)
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return fmt.Errorf("write junit: %w", err)
	}
	if _, err := io.WriteString(w, "\n"); err != nil {
		return fmt.Errorf("write junit: %w", err)
	}
	return nil
}

func scenarioSuite(s ScenarioResult) junitSuite {
	suite := junitSuite{
		Name:       "parity " + s.Scenario,
		Time:       seconds(runSeconds(s.A) + runSeconds(s.B)),
		Properties: scenarioProps(s),
	}
	if s.A != nil {
		suite.Timestamp = s.A.StartedAt.UTC().Format("2006-01-02T15:04:05")
	}
	sides := s.Sides()
	for _, a := range s.Aspects {
		tc := junitTestCase{Name: s.Scenario + ": " + a.Aspect, Classname: "parity." + s.Scenario, Time: "0"}
		switch a.Verdict {
		case Regression:
			tc.Failure = &junitMessage{Message: regressionMessage(sides, a), Type: string(Regression), Body: xmlSafe(regressionBody(sides, a))}
			suite.Failures++
		case KnownDivergence:
			tc.SystemOut = cdata(knownBody(sides, a))
		}
		suite.Cases = append(suite.Cases, tc)
		suite.Tests++
	}
	return suite
}

func scenarioProps(s ScenarioResult) *junitProps {
	props := &junitProps{}
	for _, o := range []*Observation{s.A, s.B} {
		if o == nil {
			continue
		}
		add := func(k, v string) {
			props.Props = append(props.Props, junitProp{Name: string(o.Flow) + "." + k, Value: v})
		}
		add("outcome", string(o.Outcome))
		add("fixture", o.Fixture.Name)
		if o.RunID != "" {
			add("runID", o.RunID)
		}
		for _, k := range sortedKeys(o.Backends) {
			add("backend."+k, o.Backends[k])
		}
	}
	if len(props.Props) == 0 {
		return nil
	}
	return props
}

func (r *Report) registrySuite() junitSuite {
	suite := junitSuite{Name: registrySuite, Time: "0"}
	for _, e := range r.Entries {
		tc := junitTestCase{Name: "known divergence " + e.Entry.ID, Classname: "parity.registry", Time: "0"}
		switch e.Status {
		case Reproduced:
			tc.SystemOut = cdata(entryText(e.Entry) + "\n\nReproduced in: " + strings.Join(e.ReproducedIn, ", "))
		case NotExercised:
			tc.Skipped = &junitMessage{Message: "not exercised: this run had no scenario and aspect the entry applies to"}
			suite.Skipped++
		case Stale:
			msg := staleMessage(e)
			if r.Options.AllowStale {
				tc.Skipped = &junitMessage{Message: msg}
				suite.Skipped++
			} else {
				tc.Failure = &junitMessage{Message: msg, Type: "StaleKnownDivergence", Body: xmlSafe(staleBody(e))}
				suite.Failures++
			}
		}
		suite.Cases = append(suite.Cases, tc)
		suite.Tests++
	}
	return suite
}

// regressionMessage is the failure's message: what dashboards show of a
// failed testcase (TestGrid a line of it), so it names both sides'
// unexplained lines, a few of each; the body has them all side by side.
func regressionMessage(sides Sides, a AspectResult) string {
	if a.Aspect == observationAspect || a.Aspect == outcomeAspect {
		return a.Note
	}
	mapi, capi := a.UnexplainedMAPI, a.UnexplainedCAPI
	if len(mapi)+len(capi) == 0 {
		mapi, capi = a.OnlyMAPI, a.OnlyCAPI
	}
	msg := fmt.Sprintf("%s differs and no known divergence explains it: %s %s; %s %s", a.Aspect,
		sides.TitleA, sideSummary(mapi, a.MAPIAbsent, sides.TitleB), sides.TitleB, sideSummary(capi, a.CAPIAbsent, sides.TitleA))
	if a.Note != "" {
		msg += " (" + a.Note + ")"
	}
	return msg
}

// messageLines is how many of a side's lines a failure message quotes.
const messageLines = 3

// sideSummary says what one side has that the other lacks, quoting up to
// messageLines lines, each cut at 120 characters.
func sideSummary(lines []string, absent bool, other string) string {
	switch {
	case absent:
		return "has no such aspect"
	case len(lines) == 0:
		return "has nothing " + other + " lacks"
	}
	quoted := make([]string, 0, messageLines)
	for _, l := range lines[:min(len(lines), messageLines)] {
		if r := []rune(l); len(r) > 120 {
			l = string(r[:119]) + "…"
		}
		quoted = append(quoted, strconv.Quote(l))
	}
	s := "has " + strings.Join(quoted, ", ")
	if more := len(lines) - len(quoted); more > 0 {
		s += fmt.Sprintf(" and %d more", more)
	}
	return s + " that " + other + " lacks"
}

func regressionBody(sides Sides, a AspectResult) string {
	if a.Aspect == observationAspect {
		return a.Note
	}
	var b strings.Builder
	b.WriteString(sideBySide(sides, a))
	if a.Note != "" {
		b.WriteString("\n\n" + a.Note)
	}
	for _, e := range a.Known {
		fmt.Fprintf(&b, "\n\nPartly explained by known divergence %s: %s", e.ID, e.Summary)
	}
	if reservedAspect(a.Aspect) {
		b.WriteString("\n\nNo known divergence can explain this aspect: fix the flow that failed, the milestones the scenario declares, or the slower flow.")
		return b.String()
	}
	fmt.Fprintf(&b, "\n\nIf this difference is intended, explain it in results/known-divergences.yaml; otherwise fix the %s flow.", sides.TitleB)
	return b.String()
}

func knownBody(sides Sides, a AspectResult) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Known divergence: %s differs between %s and %s, as registered.\n", a.Aspect, sides.TitleA, sides.TitleB)
	for _, e := range a.Known {
		b.WriteString("\n" + entryText(e) + "\n")
	}
	b.WriteString("\n" + sideBySide(sides, a))
	if a.Note != "" {
		b.WriteString("\n\n" + a.Note)
	}
	return b.String()
}

func entryText(e *Entry) string {
	var b strings.Builder
	fmt.Fprintf(&b, "[%s] %s\n%s", e.ID, e.Summary, strings.TrimSpace(e.Explanation))
	if e.Catalogue != "" {
		fmt.Fprintf(&b, "\nCatalogue: %s", e.Catalogue)
	}
	b.WriteString("\nUpstream:")
	for _, ref := range e.Upstream {
		fmt.Fprintf(&b, "\n  - %s", ref)
		if ref.Repository != "" {
			fmt.Fprintf(&b, " <%s>", ref.Link())
		}
	}
	return b.String()
}

func staleMessage(e EntryResult) string {
	return fmt.Sprintf("known divergence %s is stale: no difference it explains showed in %s",
		e.Entry.ID, strings.Join(e.NotReproducedIn, ", "))
}

func staleBody(e EntryResult) string {
	return entryText(e.Entry) + "\n\nThe flows no longer differ this way. Remove the entry from results/known-divergences.yaml, or narrow its scenarios if it still holds elsewhere."
}

func runSeconds(o *Observation) float64 {
	if o == nil {
		return 0
	}
	return o.FinishedAt.Sub(o.StartedAt).Seconds()
}

func seconds(s float64) string { return fmt.Sprintf("%.3f", s) }

// xmlSafe replaces what XML 1.0 cannot carry (control characters, say from
// a colourised error message) with U+FFFD.
func xmlSafe(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r == '\t' || r == '\n' || r == '\r',
			r >= 0x20 && r <= 0xD7FF, r >= 0xE000 && r <= 0xFFFD, r >= 0x10000 && r <= 0x10FFFF:
			return r
		}
		return '\uFFFD'
	}, s)
}
