package results

import "slices"

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
		case len(er.NotReproducedIn) > 0 && e.Intermittent == "":
			// An intermittent entry's race fell the same way under both
			// flows: nothing to explain, nothing stale.
			er.Status = Stale
		}
		out = append(out, er)
	}
	return out
}

// entryIn tells whether a scenario exercised the entry (an aspect it
// applies to has a line, of either flow, of the kind it explains) and
// whether the difference it names showed there: it explained it, or its
// lines showed in numbers it does not pair (Miscounted, which the aspect's
// Regression reports; calling the entry stale too would send its reader
// to remove an entry that still describes the flows), or, for a delay,
// its flow was the slower one in its phase even within the tolerance.
func entryIn(e *Entry, s ScenarioResult) (exercised, reproduced bool) {
	for _, a := range s.Aspects {
		if !e.appliesTo(s.Scenario, a.Aspect) && !e.appliesToTotal(s.Scenario, a.Aspect) {
			continue
		}
		if slices.Contains(a.Known, e) || slices.Contains(a.Miscounted, e) || e.waitShows(s.Scenario, a) {
			return true, true
		}
		exercised = exercised || e.explainsAny(sideKeyA, a.MAPI) || e.explainsAny(sideKeyB, a.CAPI) ||
			(e.Delay != nil && a.MAPIDuration != nil && a.CAPIDuration != nil)
	}
	return exercised, false
}

func (e *Entry) explainsAny(f Flow, lines []string) bool {
	return slices.ContainsFunc(lines, func(l string) bool { return e.explains(f, l) })
}
