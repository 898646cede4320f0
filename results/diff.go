package results

import (
	"fmt"
	"sort"
	"time"
)

// Verdict classifies one aspect of a paired scenario.
type Verdict string

// Verdicts, from best to worst.
const (
	// Parity: both flows did the same.
	Parity Verdict = "Parity"
	// KnownDivergence: the flows differ in a way the registry explains.
	KnownDivergence Verdict = "KnownDivergence"
	// Regression: the flows differ in a way nobody has explained, or a
	// flow did not succeed.
	Regression Verdict = "Regression"
)

// AspectResult is the verdict on one aspect of a paired scenario.
type AspectResult struct {
	// Aspect is the aspect's name.
	Aspect string
	// Verdict classifies the aspect.
	Verdict Verdict
	// MAPI and CAPI are the normalised lines of side A and side B (the
	// MAPI and the CAPI flow in most scenarios; see SidesOf), as are the
	// fields below named after them.
	MAPI, CAPI []string
	// MAPIAbsent and CAPIAbsent say a flow did not produce the aspect at all.
	MAPIAbsent, CAPIAbsent bool
	// MAPIDuration and CAPIDuration are each flow's duration, on duration
	// aspects only.
	MAPIDuration, CAPIDuration *time.Duration
	// OnlyMAPI and OnlyCAPI are the lines that differ.
	OnlyMAPI, OnlyCAPI []string
	// UnexplainedMAPI and UnexplainedCAPI are the differing lines no
	// registry entry explains; non-empty only for a Regression.
	UnexplainedMAPI, UnexplainedCAPI []string
	// Known are the registry entries that explain (some of) the difference.
	Known []*Entry
	// Miscounted are the entries whose lines matched but whose MAPI and
	// CAPI line counts differ (see Entry.CountsDiffer); their lines stay
	// unexplained and Note says so.
	Miscounted []*Entry
	// Note says more: which flow failed, the ratio of two durations, an
	// entry's line counts, an aspect present on one side only.
	Note string
}

// Differs tells whether the flows differ in this aspect at all.
func (a AspectResult) Differs() bool { return a.Verdict != Parity }

// ScenarioResult is the diff of one paired scenario.
type ScenarioResult struct {
	// Scenario names the scenario.
	Scenario string
	// A and B are the observations of side A and side B (see Pair); one
	// may be nil when a flow left no observation, which is a Regression of
	// aspect "observation".
	A, B *Observation
	// Aspects are the verdicts, in report order.
	Aspects []AspectResult
}

// Sides returns the flows the scenario compares.
func (s ScenarioResult) Sides() Sides { return SidesOf(s.Scenario) }

// Observation returns flow f's observation, nil when f left none or is
// not one of the scenario's sides.
func (s ScenarioResult) Observation(f Flow) *Observation {
	switch sides := s.Sides(); f {
	case sides.A:
		return s.A
	case sides.B:
		return s.B
	}
	return nil
}

// Count returns how many aspects have verdict v.
func (s ScenarioResult) Count(v Verdict) int {
	n := 0
	for _, a := range s.Aspects {
		if a.Verdict == v {
			n++
		}
	}
	return n
}

// Aspect returns the result for the named aspect, if present.
func (s ScenarioResult) Aspect(name string) (AspectResult, bool) {
	for _, a := range s.Aspects {
		if a.Aspect == name {
			return a, true
		}
	}
	return AspectResult{}, false
}

// Compare diffs the two flows of a scenario aspect by aspect and classifies
// each difference with reg (nil: no known divergences). Options out of
// range are an error.
func Compare(p Pair, reg *Registry, opts Options) (ScenarioResult, error) {
	if err := opts.Validate(); err != nil {
		return ScenarioResult{}, fmt.Errorf("compare %s: %w", p.Scenario, err)
	}
	res := ScenarioResult{Scenario: p.Scenario, A: p.A, B: p.B}
	if p.A == nil || p.B == nil {
		res.Aspects = []AspectResult{missingFlow(p)}
		return res, nil
	}
	m, c := aspectMap(Aspects(p.A)), aspectMap(Aspects(p.B))
	for _, name := range unionNames(m, c) {
		ar := compareAspect(p.Sides(), name, m[name], c[name], opts)
		if name == outcomeAspect {
			gateOutcome(&ar, p)
		}
		reg.explainDelays(p.Scenario, &ar, opts)
		reg.classify(p.Scenario, &ar)
		res.Aspects = append(res.Aspects, ar)
	}
	return res, nil
}

func missingFlow(p Pair) AspectResult {
	ar := AspectResult{Aspect: observationAspect, Verdict: Regression}
	sides := p.Sides()
	present, missing := p.A, sides.TitleB
	if p.A == nil {
		present, missing = p.B, sides.TitleA
	}
	if present != nil {
		ar.Note = fmt.Sprintf("the %s flow left no observation for scenario %q", missing, p.Scenario)
	}
	return ar
}

func aspectMap(as []Aspect) map[string]*Aspect {
	m := make(map[string]*Aspect, len(as))
	for i := range as {
		m[as[i].Name] = &as[i]
	}
	return m
}

func unionNames(a, b map[string]*Aspect) []string {
	set := map[string]bool{}
	for k := range a {
		set[k] = true
	}
	for k := range b {
		set[k] = true
	}
	names := sortedKeys(set)
	sort.SliceStable(names, func(i, j int) bool { return aspectLess(names[i], names[j]) })
	return names
}

func compareAspect(sides Sides, name string, m, c *Aspect, opts Options) AspectResult {
	ar := AspectResult{Aspect: name, Verdict: Parity, MAPIAbsent: m == nil, CAPIAbsent: c == nil}
	if m != nil {
		ar.MAPI, ar.MAPIDuration = m.Lines, m.Duration
	}
	if c != nil {
		ar.CAPI, ar.CAPIDuration = c.Lines, c.Duration
	}
	if ar.MAPIDuration != nil && ar.CAPIDuration != nil {
		differ, note := compareDurations(sides, *ar.MAPIDuration, *ar.CAPIDuration, opts)
		ar.Note = note
		if differ {
			ar.OnlyMAPI, ar.OnlyCAPI = m.Lines, c.Lines
			ar.Verdict = Regression
		}
		return ar
	}
	ar.OnlyMAPI, ar.OnlyCAPI = multisetDiff(ar.MAPI, ar.CAPI)
	if len(ar.OnlyMAPI)+len(ar.OnlyCAPI) > 0 || ar.MAPIAbsent != ar.CAPIAbsent {
		ar.Verdict = Regression
	}
	if ar.MAPIAbsent != ar.CAPIAbsent {
		ar.Note = presenceNote(sides, ar)
	}
	return ar
}

func presenceNote(sides Sides, ar AspectResult) string {
	present := sides.TitleA
	if ar.MAPIAbsent {
		present = sides.TitleB
	}
	return fmt.Sprintf("%s exists under %s only", ar.Aspect, present)
}

// multisetDiff returns the lines of a not in b and of b not in a, counting
// repeats; both inputs are sorted.
func multisetDiff(a, b []string) (onlyA, onlyB []string) {
	i, j := 0, 0
	for i < len(a) && j < len(b) {
		switch {
		case a[i] == b[j]:
			i++
			j++
		case a[i] < b[j]:
			onlyA = append(onlyA, a[i])
			i++
		default:
			onlyB = append(onlyB, b[j])
			j++
		}
	}
	onlyA = append(onlyA, a[i:]...)
	onlyB = append(onlyB, b[j:]...)
	return onlyA, onlyB
}
