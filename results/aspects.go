package results

import (
	"sort"
	"strings"
	"time"
)

// Aspect is one comparable fact of an Observation after normalisation:
// names, UIDs, addresses and timestamps are gone, so the same behaviour
// gives the same Aspect in both flows.
type Aspect struct {
	// Name is "area/detail", e.g. nodes/providerID or objects/machine/phases.
	Name string `json:"name"`
	// Lines are the normalised values, sorted; two aspects are compared as
	// multisets of lines.
	Lines []string `json:"lines"`
	// Duration is set on duration aspects, which are compared as a ratio
	// within a tolerance instead of line by line.
	Duration *time.Duration `json:"duration,omitempty"`
}

// Aspect areas, in report order.
var areaOrder = []string{"outcome", "fixture", "milestones", "objects", "nodes", "hosts", "durations", "events", "errors"}

// Aspects normalises o into its comparable aspects, sorted by area and name.
// It does not change o, and gives the same aspects whatever the order of
// o's unordered lists.
func Aspects(o *Observation) []Aspect {
	s := newScrubber(o)
	as := []Aspect{
		{Name: outcomeAspect, Lines: []string{orNone(string(o.Outcome))}},
		fixtureAspect(o, s),
	}
	as = append(as, milestoneAspects(o)...)
	as = append(as, objectAspects(o, s)...)
	as = append(as, nodeAspects(o.Nodes, s)...)
	as = append(as, nodeIdentityAspects(o)...)
	as = append(as, hostAspects(o.Hosts, s)...)
	as = append(as, durationAspects(o)...)
	as = append(as, eventAspects(o.Events, s)...)
	as = append(as, errorAspect(o.Errors, s))
	for i := range as {
		sort.Strings(as[i].Lines)
	}
	sortAspects(as)
	return as
}

// aspectRank orders aspect names: by area, then by name.
func aspectRank(name string) int {
	area, _, _ := strings.Cut(name, "/")
	for i, a := range areaOrder {
		if a == area {
			return i
		}
	}
	return len(areaOrder)
}

func aspectLess(a, b string) bool {
	ra, rb := aspectRank(a), aspectRank(b)
	if ra != rb {
		return ra < rb
	}
	return a < b
}

func sortAspects(as []Aspect) {
	sort.SliceStable(as, func(i, j int) bool { return aspectLess(as[i].Name, as[j].Name) })
}

// eventAspects are the sets of "role: reason" of Warning and of Normal
// events: which events the controllers raise, not how often or when.
// Warnings count whatever they are about (a warning on an object of one
// flow's own kind is a problem of that flow); Normal events only about
// objects with a role, which have a counterpart in the other flow.
func eventAspects(events []Event, s *scrubber) []Aspect {
	return []Aspect{eventAspect("events/warnings", "Warning", false, events, s), eventAspect("events/normal", "Normal", true, events, s)}
}

func eventAspect(name, typ string, roleOnly bool, events []Event, s *scrubber) Aspect {
	set := map[string]bool{}
	for _, e := range events {
		if e.Type != typ || (roleOnly && e.Role == "") {
			continue
		}
		line := e.Reason
		if e.Role != "" {
			line = e.Role + ": " + e.Reason
		}
		set[s.scrub(line)] = true
	}
	return Aspect{Name: name, Lines: sortedKeys(set)}
}

func errorAspect(errs []Error, s *scrubber) Aspect {
	set := map[string]bool{}
	for _, e := range errs {
		set[s.scrub(e.Source+": "+e.Message)] = true
	}
	return Aspect{Name: "errors", Lines: sortedKeys(set)}
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
