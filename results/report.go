package results

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"sort"
	"strings"
)

// Pair is the two observations of one scenario.
type Pair struct {
	// Scenario names the scenario.
	Scenario string
	// A and B are the observations of the scenario's side A and side B
	// (SidesOf): the MAPI and the CAPI flow's in most scenarios. Either is
	// nil when its flow left none.
	A, B *Observation
}

// Sides returns the flows the pair's scenario compares.
func (p Pair) Sides() Sides { return SidesOf(p.Scenario) }

// NewPair pairs two observations of the same scenario, in either order.
func NewPair(a, b *Observation) (Pair, error) {
	pairs, err := PairUp([]*Observation{a, b})
	if err != nil {
		return Pair{}, err
	}
	if len(pairs) != 1 {
		return Pair{}, fmt.Errorf("pair observations: scenarios %q and %q differ", a.Scenario, b.Scenario)
	}
	p := pairs[0]
	if p.A == nil || p.B == nil {
		sides := p.Sides()
		return Pair{}, fmt.Errorf("pair observations: need one %s (%s) and one %s (%s) observation of %q",
			sides.A, sides.TitleA, sides.B, sides.TitleB, p.Scenario)
	}
	return p, nil
}

// PairUp groups observations by scenario, sorted by scenario name, each
// on its side of the scenario (SidesOf). An observation of a flow its
// scenario does not compare, and two observations of the same scenario
// and flow, are errors.
func PairUp(obs []*Observation) ([]Pair, error) {
	byScenario := map[string]*Pair{}
	for _, o := range obs {
		p := byScenario[o.Scenario]
		if p == nil {
			p = &Pair{Scenario: o.Scenario}
			byScenario[o.Scenario] = p
		}
		slot, err := p.slot(o.Flow)
		if err != nil {
			return nil, err
		}
		if *slot != nil {
			return nil, fmt.Errorf("pair observations: scenario %q has two %s observations", o.Scenario, o.Flow)
		}
		*slot = o
	}
	pairs := make([]Pair, 0, len(byScenario))
	for _, k := range sortedKeys(byScenario) {
		pairs = append(pairs, *byScenario[k])
	}
	return pairs, nil
}

// slot returns the side of the pair that holds flow f's observation.
func (p *Pair) slot(f Flow) (**Observation, error) {
	switch sides := p.Sides(); f {
	case sides.A:
		return &p.A, nil
	case sides.B:
		return &p.B, nil
	default:
		return nil, fmt.Errorf("pair observations: scenario %q compares %s (%s) and %s (%s), not %s",
			p.Scenario, sides.A, sides.TitleA, sides.B, sides.TitleB, f)
	}
}

// LoadDir reads every observation in the *.json files under dir and pairs
// them. JSON files that are not observations (no paritylab.io/observation
// schemaVersion) are skipped; a broken observation is an error.
func LoadDir(dir string) ([]Pair, error) {
	var obs []*Observation
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(d.Name(), ".json") {
			return err
		}
		o, err := ReadFile(p)
		if errors.Is(err, ErrNotObservation) {
			return nil
		}
		if err != nil {
			return err
		}
		obs = append(obs, o)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("load observations: %w", err)
	}
	if len(obs) == 0 {
		return nil, fmt.Errorf("load observations: no observation (*.json with schemaVersion %q) under %s", SchemaVersion, dir)
	}
	return PairUp(obs)
}

// Report is the verdict over a run: every paired scenario diffed, and what
// became of every known-divergence registry entry.
type Report struct {
	// Scenarios are the diffed scenarios, sorted by name.
	Scenarios []ScenarioResult
	// Entries are the registry entries and their status in this run.
	Entries []EntryResult
	// Options are the comparison options used.
	Options Options
}

// Build diffs every pair and checks the registry against the run. Options
// out of range are an error (see Options.Validate).
func Build(pairs []Pair, reg *Registry, opts Options) (*Report, error) {
	if err := opts.Validate(); err != nil {
		return nil, fmt.Errorf("build parity report: %w", err)
	}
	r := &Report{Options: opts}
	for _, p := range pairs {
		res, err := Compare(p, reg, opts)
		if err != nil {
			return nil, fmt.Errorf("build parity report: %w", err)
		}
		r.Scenarios = append(r.Scenarios, res)
	}
	sort.SliceStable(r.Scenarios, func(i, j int) bool { return r.Scenarios[i].Scenario < r.Scenarios[j].Scenario })
	r.Entries = reg.entryResults(r.Scenarios)
	return r, nil
}

// Counts sums up a report.
type Counts struct {
	Scenarios, Aspects                  int
	Parity, KnownDivergence, Regression int
	Reproduced, Stale, NotExercised     int
}

// Counts sums up the report.
func (r *Report) Counts() Counts {
	c := Counts{Scenarios: len(r.Scenarios)}
	for _, s := range r.Scenarios {
		c.Aspects += len(s.Aspects)
		c.Parity += s.Count(Parity)
		c.KnownDivergence += s.Count(KnownDivergence)
		c.Regression += s.Count(Regression)
	}
	for _, e := range r.Entries {
		switch e.Status {
		case Reproduced:
			c.Reproduced++
		case Stale:
			c.Stale++
		case NotExercised:
			c.NotExercised++
		}
	}
	return c
}

// Failed tells whether the run fails: a flow that did not succeed, a
// regression, or a stale registry entry unless Options.AllowStale.
func (r *Report) Failed() bool {
	for _, s := range r.Scenarios {
		if s.Failed() {
			return true
		}
	}
	c := r.Counts()
	return c.Regression > 0 || (c.Stale > 0 && !r.Options.AllowStale)
}

// StaleEntries returns the entries that no longer reproduce.
func (r *Report) StaleEntries() []EntryResult {
	var out []EntryResult
	for _, e := range r.Entries {
		if e.Status == Stale {
			out = append(out, e)
		}
	}
	return out
}

// AspectNames returns every aspect name of the report in report order: the
// columns of the parity matrix.
func (r *Report) AspectNames() []string {
	set := map[string]bool{}
	for _, s := range r.Scenarios {
		for _, a := range s.Aspects {
			set[a.Aspect] = true
		}
	}
	names := sortedKeys(set)
	sort.SliceStable(names, func(i, j int) bool { return aspectLess(names[i], names[j]) })
	return names
}
