package results

import (
	"path"
	"regexp"
	"slices"
)

// appliesTo tells whether the entry covers an aspect of a scenario.
func (e *Entry) appliesTo(scenario, aspect string) bool {
	if ok, _ := path.Match(e.Aspect, aspect); !ok {
		return false
	}
	if len(e.Scenarios) == 0 {
		return true
	}
	for _, g := range e.Scenarios {
		if ok, _ := path.Match(g, scenario); ok {
			return true
		}
	}
	return false
}

// explains tells whether the entry explains a line only flow f has.
func (e *Entry) explains(f Flow, line string) bool {
	if matchesAny(e.exceptRE, line) {
		return false
	}
	if len(e.mapiRE) == 0 && len(e.capiRE) == 0 {
		return true
	}
	if f == FlowCAPI {
		return matchesAny(e.capiRE, line)
	}
	return matchesAny(e.mapiRE, line)
}

func matchesAny(res []*regexp.Regexp, line string) bool {
	return slices.ContainsFunc(res, func(re *regexp.Regexp) bool { return re.MatchString(line) })
}

// classify turns a differing aspect into a KnownDivergence when registry
// entries explain every differing line, and records which entries helped.
func (r *Registry) classify(scenario string, ar *AspectResult) {
	if ar.Verdict == Parity {
		return
	}
	var entries []*Entry
	if r != nil {
		for _, e := range r.Entries {
			if e.appliesTo(scenario, ar.Aspect) {
				entries = append(entries, e)
			}
		}
	}
	var used []*Entry
	ar.UnexplainedMAPI = explainLines(FlowMAPI, ar.OnlyMAPI, entries, &used)
	ar.UnexplainedCAPI = explainLines(FlowCAPI, ar.OnlyCAPI, entries, &used)
	if len(ar.OnlyMAPI)+len(ar.OnlyCAPI) == 0 && len(entries) > 0 {
		// Only presence differs (an aspect with no lines on one side).
		used = append(used, entries[0])
	}
	ar.Known = used
	ar.Verdict = Regression
	if len(used) > 0 && len(ar.UnexplainedMAPI)+len(ar.UnexplainedCAPI) == 0 {
		ar.Verdict = KnownDivergence
	}
}

// explainLines returns the lines no entry explains, adding the entries that
// explained any to used (first matching entry wins).
func explainLines(f Flow, lines []string, entries []*Entry, used *[]*Entry) []string {
	var unexplained []string
	for _, line := range lines {
		i := slices.IndexFunc(entries, func(e *Entry) bool { return e.explains(f, line) })
		if i < 0 {
			unexplained = append(unexplained, line)
			continue
		}
		if !slices.Contains(*used, entries[i]) {
			*used = append(*used, entries[i])
		}
	}
	return unexplained
}

// EntryStatus says what became of a registry entry in a run.
type EntryStatus string

// Entry statuses.
const (
	// Reproduced: the entry explained a difference of the run.
	Reproduced EntryStatus = "Reproduced"
	// Stale: the run exercised the entry (an aspect it applies to had a
	// line of the kind it explains) but no difference it explains showed:
	// the entry no longer reproduces.
	Stale EntryStatus = "Stale"
	// NotExercised: the run had none of the entry's scenarios and aspects,
	// or none of their lines were of the kind the entry explains.
	NotExercised EntryStatus = "NotExercised"
)

// EntryResult is what became of one registry entry in a run.
type EntryResult struct {
	// Entry is the registry entry.
	Entry *Entry
	// Status is Reproduced, Stale or NotExercised.
	Status EntryStatus
	// ReproducedIn are the scenarios where the entry explained a difference.
	ReproducedIn []string
	// NotReproducedIn are the scenarios that had a matching aspect but no
	// difference the entry explains.
	NotReproducedIn []string
}

// entryResults reports every registry entry's status over a run.
func (r *Registry) entryResults(scenarios []ScenarioResult) []EntryResult {
	if r == nil {
		return nil
	}
	out := make([]EntryResult, 0, len(r.Entries))
	for _, e := range r.Entries {
		er := EntryResult{Entry: e, Status: NotExercised}
		for _, s := range scenarios {
			exercised, reproduced := entryIn(e, s)
			switch {
			case reproduced:
				er.ReproducedIn = append(er.ReproducedIn, s.Scenario)
			case exercised:
				er.NotReproducedIn = append(er.NotReproducedIn, s.Scenario)
			}
		}
		switch {
		case len(er.ReproducedIn) > 0:
			er.Status = Reproduced
		case len(er.NotReproducedIn) > 0:
			er.Status = Stale
		}
		out = append(out, er)
	}
	return out
}

// entryIn tells whether a scenario exercised the entry (an aspect it
// applies to has a line, of either flow, of the kind it explains) and
// whether the entry explained a difference there.
func entryIn(e *Entry, s ScenarioResult) (exercised, reproduced bool) {
	for _, a := range s.Aspects {
		if !e.appliesTo(s.Scenario, a.Aspect) {
			continue
		}
		if slices.Contains(a.Known, e) {
			return true, true
		}
		exercised = exercised || e.explainsAny(FlowMAPI, a.MAPI) || e.explainsAny(FlowCAPI, a.CAPI)
	}
	return exercised, false
}

func (e *Entry) explainsAny(f Flow, lines []string) bool {
	return slices.ContainsFunc(lines, func(l string) bool { return e.explains(f, l) })
}
