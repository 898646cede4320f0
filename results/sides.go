package results

import (
	"slices"
	"strings"
)

// The flows HyperShift scenarios compare with the CAPI flow.
const (
	// FlowCAPIPrivate is CAPI on HyperShift's private CAPI types, which it
	// reaches through an API proxy.
	FlowCAPIPrivate Flow = "capi-private"
	// FlowCAPIMigrated is CAPI on a hosted cluster after its migration
	// from the standard to the private CAPI types.
	FlowCAPIMigrated Flow = "capi-migrated"
)

// The scenarios whose sides are not MAPI and CAPI.
const (
	// ScenarioHyperShiftPrivateTypes compares CAPI on the standard types
	// (side A) with CAPI on the private types (side B).
	ScenarioHyperShiftPrivateTypes = "hypershift-private-types"
	// ScenarioHyperShiftMigration compares a hosted cluster's CAPI before
	// (side A) and after (side B) its migration to the private types.
	ScenarioHyperShiftMigration = "hypershift-migration"
)

// Sides are the two flows a scenario compares and what reports call them.
// Most scenarios compare the MAPI flow (side A) with the CAPI flow (side
// B); the HyperShift ones compare CAPI with CAPI: on the standard types
// with the private types behind an API proxy, and a hosted cluster before
// with after its migration from the one to the other.
//
// Side A is shown first (the left column, the first row, the base of a
// delta and a ratio), side B second, as MAPI and CAPI always were, so that
// the reports of existing scenarios stay as they are. The known-divergence
// registry names the sides mapi and capi in every scenario (sideKeyA,
// sideKeyB): an entry's mapi: and capi: keys, presentIn and delay.flow
// mean side A and side B of the entry's scenarios, so one registry format
// serves every pair of flows.
type Sides struct {
	// A and B are the flows of side A, shown first, and side B.
	A, B Flow
	// TitleA and TitleB name the sides in reports, e.g. "MAPI".
	TitleA, TitleB string
}

var (
	defaultSides  = Sides{A: FlowMAPI, B: FlowCAPI, TitleA: "MAPI", TitleB: "CAPI"}
	scenarioSides = map[string]Sides{
		ScenarioHyperShiftPrivateTypes: {A: FlowCAPI, B: FlowCAPIPrivate, TitleA: "CAPI standard types", TitleB: "CAPI private types"},
		ScenarioHyperShiftMigration:    {A: FlowCAPI, B: FlowCAPIMigrated, TitleA: "CAPI before migration", TitleB: "CAPI after migration"},
	}
)

// SidesOf returns the sides of a scenario: MAPI and CAPI unless the
// scenario is one of the HyperShift scenarios above.
func SidesOf(scenario string) Sides {
	if s, ok := scenarioSides[scenario]; ok {
		return s
	}
	return defaultSides
}

// Flows returns the two flows, side A first.
func (s Sides) Flows() []Flow { return []Flow{s.A, s.B} }

// Has tells whether f is one of the two flows.
func (s Sides) Has(f Flow) bool { return f == s.A || f == s.B }

// Title returns the title of flow f; f's own name when it is neither side.
func (s Sides) Title(f Flow) string {
	switch f {
	case s.A:
		return s.TitleA
	case s.B:
		return s.TitleB
	}
	return string(f)
}

// String says what the sides compare: "MAPI vs CAPI".
func (s Sides) String() string { return s.TitleA + " vs " + s.TitleB }

// The registry's names of the two sides, in every scenario (see Sides).
const (
	sideKeyA = FlowMAPI
	sideKeyB = FlowCAPI
)

// keyTitle returns the title of the side a registry key names.
func (s Sides) keyTitle(key Flow) string {
	if key == sideKeyB {
		return s.TitleB
	}
	return s.TitleA
}

// allFlows lists every flow an observation may have: the default sides'
// first, then the other scenarios' in scenario order.
func allFlows() []Flow {
	out := defaultSides.Flows()
	for _, name := range sortedKeys(scenarioSides) {
		for _, f := range scenarioSides[name].Flows() {
			if !slices.Contains(out, f) {
				out = append(out, f)
			}
		}
	}
	return out
}

// distinctSides are the scenarios' sides, each once, in scenario order;
// the default sides when there is no scenario.
func distinctSides(scenarios []ScenarioResult) []Sides {
	var out []Sides
	for _, s := range scenarios {
		if sides := s.Sides(); !slices.Contains(out, sides) {
			out = append(out, sides)
		}
	}
	if len(out) == 0 {
		return []Sides{defaultSides}
	}
	return out
}

// comparison says what a report compares, for its title: "MAPI vs CAPI",
// or every pair of sides its scenarios have, joined by ", ".
func (r *Report) comparison() string {
	var parts []string
	for _, sides := range distinctSides(r.Scenarios) {
		parts = append(parts, sides.String())
	}
	return strings.Join(parts, ", ")
}
