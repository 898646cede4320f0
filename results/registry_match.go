package results

import (
	"fmt"
	"path"
	"regexp"
	"slices"
	"sort"
	"strings"
)

// appliesTo tells whether the entry covers an aspect of a scenario.
func (e *Entry) appliesTo(scenario, aspect string) bool {
	if ok, _ := path.Match(e.Aspect, aspect); !ok {
		return false
	}
	return e.inScenario(scenario)
}

// inScenario tells whether the entry covers the scenario.
func (e *Entry) inScenario(scenario string) bool {
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

// explains tells whether the entry explains a line only side f has
// (sideKeyA or sideKeyB): one of its patterns (or its conditions) for f
// names the line, and no except pattern does.
func (e *Entry) explains(f Flow, line string) bool {
	if matchesAny(e.exceptRE, line) {
		return false
	}
	if e.conds != nil {
		return e.conds.explains(f, line)
	}
	if f == sideKeyB {
		return matchesAny(e.capiRE, line)
	}
	return matchesAny(e.mapiRE, line)
}

func matchesAny(res []*regexp.Regexp, line string) bool {
	return slices.ContainsFunc(res, func(re *regexp.Regexp) bool { return re.MatchString(line) })
}

// reservedAspect tells whether nothing may explain the aspect (see
// Entry.checkAspect); the loader keeps entries off them, and classify does
// not even look.
func reservedAspect(name string) bool {
	return name == outcomeAspect || name == observationAspect || name == milestonesAspect || strings.HasPrefix(name, "durations/")
}

// claim is the lines of an aspect one entry explains.
type claim struct {
	entry      *Entry
	mapi, capi []string
}

// classify turns a differing aspect into a KnownDivergence when registry
// entries explain every differing line, in the right numbers, and the
// aspect's presence on one side only if that is the difference.
func (r *Registry) classify(scenario string, ar *AspectResult) {
	if ar.Verdict != Regression {
		return
	}
	if reservedAspect(ar.Aspect) {
		ar.UnexplainedMAPI, ar.UnexplainedCAPI = ar.OnlyMAPI, ar.OnlyCAPI
		return
	}
	entries := r.applicable(scenario, ar.Aspect)
	sides := SidesOf(scenario)
	claims, unM, unC := claimLines(entries, ar.OnlyMAPI, ar.OnlyCAPI)
	var notes []string
	if ar.Note != "" {
		notes = append(notes, ar.Note)
	}
	for _, c := range claims {
		if c.entry.RequireAll {
			if missing := c.unnamed(sides); len(missing) > 0 {
				unM, unC = append(unM, c.mapi...), append(unC, c.capi...)
				notes = append(notes, fmt.Sprintf("entry %s explains its behaviour only in full (requireAll), but %s", c.entry.ID, strings.Join(missing, ", ")))
				continue
			}
		} else if n := len(c.mapi) + len(c.capi); c.entry.Lines > 0 && n != c.entry.Lines {
			unM, unC = append(unM, c.mapi...), append(unC, c.capi...)
			notes = append(notes, fmt.Sprintf("entry %s explains %d line(s) only, here %d match it", c.entry.ID, c.entry.Lines, n))
			continue
		} else if c.entry.twoSided() && c.entry.CountsDiffer == "" && c.entry.Intermittent == "" && len(c.mapi) != len(c.capi) {
			unM, unC = append(unM, c.mapi...), append(unC, c.capi...)
			ar.Miscounted = append(ar.Miscounted, c.entry)
			notes = append(notes, fmt.Sprintf("entry %s explains %d %s line(s) but %d %s line(s); it pairs them one to one (give it countsDiffer: <why> if the flows really differ in number)",
				c.entry.ID, len(c.mapi), sides.TitleA, len(c.capi), sides.TitleB))
			continue
		}
		ar.Known = append(ar.Known, c.entry)
	}
	presenceOK := r.explainPresence(entries, ar, &notes)
	sort.Strings(unM)
	sort.Strings(unC)
	ar.UnexplainedMAPI, ar.UnexplainedCAPI = unM, unC
	ar.Note = strings.Join(notes, "; ")
	ar.Verdict = Regression
	if presenceOK && len(ar.Known) > 0 && len(unM)+len(unC) == 0 {
		ar.Verdict = KnownDivergence
	}
}

// unnamed returns, for a RequireAll entry's claim, the patterns (with
// the title of their side) that name none of the claimed lines.
func (c *claim) unnamed(sides Sides) []string {
	var missing []string
	for _, side := range []struct {
		flow     Flow
		patterns []string
		res      []*regexp.Regexp
		lines    []string
	}{{sideKeyA, c.entry.MAPI, c.entry.mapiRE, c.mapi}, {sideKeyB, c.entry.CAPI, c.entry.capiRE, c.capi}} {
		for i, re := range side.res {
			if !slices.ContainsFunc(side.lines, re.MatchString) {
				missing = append(missing, fmt.Sprintf("no %s line matches %q", sides.keyTitle(side.flow), side.patterns[i]))
			}
		}
	}
	return missing
}

// applicable returns the entries that cover the aspect, in registry order.
func (r *Registry) applicable(scenario, aspect string) []*Entry {
	if r == nil {
		return nil
	}
	var out []*Entry
	for _, e := range r.Entries {
		if e.appliesTo(scenario, aspect) {
			out = append(out, e)
		}
	}
	return out
}

// claimLines gives each differing line to the first entry that explains
// it, and returns the claims in registry order with the lines nobody
// explains.
func claimLines(entries []*Entry, onlyMAPI, onlyCAPI []string) (claims []*claim, unM, unC []string) {
	byEntry := map[*Entry]*claim{}
	take := func(f Flow, line string) bool {
		i := slices.IndexFunc(entries, func(e *Entry) bool { return e.explains(f, line) })
		if i < 0 {
			return false
		}
		c := byEntry[entries[i]]
		if c == nil {
			c = &claim{entry: entries[i]}
			byEntry[entries[i]] = c
		}
		if f == sideKeyA {
			c.mapi = append(c.mapi, line)
		} else {
			c.capi = append(c.capi, line)
		}
		return true
	}
	for _, l := range onlyMAPI {
		if !take(sideKeyA, l) {
			unM = append(unM, l)
		}
	}
	for _, l := range onlyCAPI {
		if !take(sideKeyB, l) {
			unC = append(unC, l)
		}
	}
	for _, e := range entries {
		if c := byEntry[e]; c != nil {
			claims = append(claims, c)
		}
	}
	return claims, unM, unC
}

// explainPresence tells whether the aspect's presence is explained: it is
// on both sides, or only on one and an entry says it exists under that
// side only (presentIn), which then counts among the aspect's Known.
func (r *Registry) explainPresence(entries []*Entry, ar *AspectResult, notes *[]string) bool {
	if ar.MAPIAbsent == ar.CAPIAbsent {
		return true
	}
	present := sideKeyA
	if ar.MAPIAbsent {
		present = sideKeyB
	}
	i := slices.IndexFunc(entries, func(e *Entry) bool { return e.PresentIn == present })
	if i < 0 {
		*notes = append(*notes, fmt.Sprintf("no known divergence says it may (presentIn: %s)", present))
		return false
	}
	if !slices.Contains(ar.Known, entries[i]) {
		ar.Known = append(ar.Known, entries[i])
	}
	return true
}
