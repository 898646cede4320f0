package results

import (
	"errors"
	"fmt"
	"path"
	"regexp"
	"slices"
	"strings"
)

// The loader's rules. An entry is reviewed text, but a reviewer cannot run
// every pattern against every line a flow might write; these rules make
// the over-broad entries a review misses fail to load:
//
//   - entries explain named lines: mapi/capi patterns, or structured
//     conditions for condition aspects; an entry without is rejected;
//   - no catch-all: a pattern that matches canary lines no aspect has
//     (canaryLines) explains whatever shows, and is rejected;
//   - condition aspects take structured conditions only, pinned to healthy
//     end states for live objects (registry_conditions.go), unless the
//     entry says why its scenarios, named one by one, end unhealthy by
//     design (unhealthyByDesign);
//   - host states pin operational=, power= and online= to literal values
//     (registry_hoststate.go);
//   - scenario globs match declared scenarios;
//   - outcome, observation and milestones are never explained, durations
//     only by a delay of one flow in one phase, bounded and cited
//     (registry_delay.go);
//   - presentIn names one flow, and the entry names no line of the other;
//   - countsDiffer only on entries that explain lines of both flows;
//   - requireAll only on pattern entries, without countsDiffer;
//   - intermittent only on entries that name the same lines for both
//     flows, how many, and their scenarios one by one.

var entryID = regexp.MustCompile(`^[a-z0-9]+(-[a-z0-9]+)*$`)

// canaryLines are lines no aspect has. A pattern that matches one of them
// matches more than the lines it names: ".*", ".+", `\S+`, "[^=]*",
// "label .*" and the like.
var canaryLines = []string{
	"", "x", "paritylab-canary", "label paritylab.io/canary=1", "annotation paritylab.io/canary=1",
	"paritylab.io/canary=1", "Canary=True", "paritylab-canary: Canary", "live: Canary=True",
	"paritylab-canary operational=paritylab-canary power=paritylab-canary online=paritylab-canary",
}

func (r *Registry) compile() error {
	var errs []error
	if r.APIVersion != RegistryAPIVersion {
		errs = append(errs, fmt.Errorf("apiVersion %q is not %q", r.APIVersion, RegistryAPIVersion))
	}
	errs = append(errs, r.checkDeclared()...)
	seen := map[string]bool{}
	for i, e := range r.Entries {
		if e == nil {
			errs = append(errs, fmt.Errorf("divergences[%d]: empty entry", i))
			continue
		}
		if seen[e.ID] {
			errs = append(errs, fmt.Errorf("divergences[%d]: id %q is used twice", i, e.ID))
		}
		seen[e.ID] = true
		if err := errors.Join(e.compile(), r.checkScenarioGlobs(e)); err != nil {
			errs = append(errs, fmt.Errorf("divergences[%d] %q: %w", i, e.ID, err))
		}
	}
	return errors.Join(errs...)
}

// checkDeclared holds the scenarios list to be there, well named and
// without repeats.
func (r *Registry) checkDeclared() []error {
	if len(r.Declared) == 0 {
		return []error{errors.New("scenarios: declare the scenarios that exist, e.g. scenarios: [day1, day2-scale]")}
	}
	var errs []error
	seen := map[string]bool{}
	for _, s := range r.Declared {
		if !entryID.MatchString(s) || seen[s] {
			errs = append(errs, fmt.Errorf("scenarios: %q must be a lower-case name, declared once", s))
		}
		seen[s] = true
	}
	return errs
}

func (r *Registry) checkScenarioGlobs(e *Entry) error {
	var errs []error
	for _, g := range e.Scenarios {
		if !slices.ContainsFunc(r.Declared, func(s string) bool { ok, _ := path.Match(g, s); return ok }) {
			errs = append(errs, fmt.Errorf("scenario glob %q matches no declared scenario (%s): "+
				"an entry for a scenario that does not exist yet belongs in results/catalogue/pending-divergences.yaml",
				g, strings.Join(r.Declared, ", ")))
		}
	}
	return errors.Join(errs...)
}

func (e *Entry) compile() error {
	var errs []error
	add := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	if !entryID.MatchString(e.ID) {
		add("id must be lower-case words joined by dashes")
	}
	if strings.TrimSpace(e.Summary) == "" || strings.TrimSpace(e.Explanation) == "" {
		add("summary and explanation are required")
	}
	for _, g := range append([]string{e.Aspect}, e.Scenarios...) {
		if _, err := path.Match(g, ""); err != nil || g == "" {
			add("bad glob %q", g)
		}
	}
	if len(e.Upstream) == 0 {
		add("at least one upstream reference is required")
	}
	for _, ref := range e.Upstream {
		if (ref.Repository == "" || ref.Path == "") && ref.URL == "" {
			add("an upstream reference needs repository and path, or url")
		}
	}
	var err error
	if e.mapiRE, err = compileLines(e.MAPI); err != nil {
		add("mapi: %w", err)
	}
	if e.capiRE, err = compileLines(e.CAPI); err != nil {
		add("capi: %w", err)
	}
	if e.exceptRE, err = compileLines(e.Except); err != nil {
		add("except: %w", err)
	}
	if len(errs) > 0 {
		return errors.Join(errs...)
	}
	return e.checkRules()
}

func compileLines(patterns []string) ([]*regexp.Regexp, error) {
	res := make([]*regexp.Regexp, 0, len(patterns))
	for _, p := range patterns {
		re, err := regexp.Compile(`^(?:` + p + `)$`)
		if err != nil {
			return nil, fmt.Errorf("compile %q: %w", p, err)
		}
		res = append(res, re)
	}
	return res, nil
}

// checkRules applies the rules above to an entry whose fields compiled.
func (e *Entry) checkRules() error {
	if e.Delay != nil {
		return e.checkDelay()
	}
	errs := []error{e.checkAspect(), e.checkLinesNamed()}
	errs = append(errs, e.checkCatchAll()...)
	if ok, _ := path.Match(e.Aspect, "hosts/state"); ok {
		for _, p := range append(append([]string(nil), e.MAPI...), e.CAPI...) {
			errs = append(errs, checkHostStatePattern(p))
		}
	}
	errs = append(errs, e.checkPresentIn(), e.checkCountsDiffer(), e.checkRequireAll(), e.checkLines(), e.checkUnhealthyByDesign(),
		e.checkIntermittent())
	return errors.Join(errs...)
}

// checkUnhealthyByDesign keeps an entry that explains unhealthy live
// states to condition lines of scenarios it names one by one: a glob
// would carry the exception to scenarios that do not end unhealthy on
// purpose, where it would hide a regression.
func (e *Entry) checkUnhealthyByDesign() error {
	if e.UnhealthyByDesign == "" {
		return nil
	}
	var errs []error
	if strings.TrimSpace(e.UnhealthyByDesign) == "" {
		errs = append(errs, errors.New("unhealthyByDesign must say why the scenario ends with these objects unhealthy"))
	}
	if e.Conditions == nil {
		errs = append(errs, errors.New("unhealthyByDesign applies to conditions only; drop it"))
	}
	if len(e.Scenarios) == 0 {
		errs = append(errs, errors.New("unhealthyByDesign needs scenarios named one by one: without, it would apply to every scenario"))
	}
	for _, g := range e.Scenarios {
		if strings.ContainsAny(g, `*?[\`) {
			errs = append(errs, fmt.Errorf("unhealthyByDesign needs scenarios named one by one, not the glob %q: it would apply to scenarios that do not end unhealthy on purpose", g))
		}
	}
	return errors.Join(errs...)
}

// checkIntermittent keeps an entry for a race of shared components to
// its own lines: the same for both flows (the race may fall either way
// under either), bounded in number, in scenarios named one by one, where
// a glob would carry it to scenarios that do not race.
func (e *Entry) checkIntermittent() error {
	if e.Intermittent == "" {
		return nil
	}
	var errs []error
	if strings.TrimSpace(e.Intermittent) == "" {
		errs = append(errs, errors.New("intermittent must say which race of shared components decides whether the lines show"))
	}
	if len(e.MAPI) == 0 || !slices.Equal(sortedCopy(e.MAPI), sortedCopy(e.CAPI)) {
		errs = append(errs, errors.New("intermittent needs the same mapi and capi patterns: a race of components both flows share may show under either"))
	}
	if e.Lines == 0 {
		errs = append(errs, errors.New("intermittent needs lines: how many differing lines the race makes, of either flow"))
	}
	if e.PresentIn != "" || e.RequireAll || e.CountsDiffer != "" || e.UnhealthyByDesign != "" {
		errs = append(errs, errors.New("intermittent takes no presentIn, requireAll, countsDiffer or unhealthyByDesign"))
	}
	if len(e.Scenarios) == 0 {
		errs = append(errs, errors.New("intermittent needs scenarios named one by one: without, it would apply to every scenario"))
	}
	for _, g := range e.Scenarios {
		if strings.ContainsAny(g, `*?[\`) {
			errs = append(errs, fmt.Errorf("intermittent needs scenarios named one by one, not the glob %q", g))
		}
	}
	return errors.Join(errs...)
}

func sortedCopy(ss []string) []string {
	out := slices.Clone(ss)
	slices.Sort(out)
	return out
}

// checkAspect keeps entries off the aspects nothing may explain.
func (e *Entry) checkAspect() error {
	for _, reserved := range []string{outcomeAspect, observationAspect, milestonesAspect} {
		if ok, _ := path.Match(e.Aspect, reserved); ok {
			return fmt.Errorf("aspect %q covers %q, which no entry may explain: a flow that did not succeed, left no observation or declared other milestones fails the run; narrow the aspect", e.Aspect, reserved)
		}
	}
	if segs := strings.Split(e.Aspect, "/"); len(segs) == 2 {
		if ok, _ := path.Match(segs[0], "durations"); ok {
			return fmt.Errorf("aspect %q covers durations, which the tolerance judges (Options), not lines; narrow the aspect, or explain a wait of one flow in one phase with delay", e.Aspect)
		}
	}
	return nil
}

// checkLinesNamed holds an entry to name the lines it explains, in the
// form its aspect takes.
func (e *Entry) checkLinesNamed() error {
	regexes := len(e.MAPI) + len(e.CAPI) + len(e.Except)
	switch {
	case coversConditions(e.Aspect) && regexes > 0:
		return fmt.Errorf("aspect %q covers condition aspects, which take no mapi, capi or except patterns: explain condition lines with conditions: {capi: {live: {Ready: \"True\"}}}", e.Aspect)
	case e.Conditions != nil && !onlyConditions(e.Aspect):
		return fmt.Errorf("conditions explain objects/<role>/conditions aspects only; aspect %q is not one", e.Aspect)
	case e.Conditions != nil:
		var err error
		e.conds, err = e.Conditions.compile(e.UnhealthyByDesign != "")
		return err
	case len(e.MAPI)+len(e.CAPI) == 0:
		return errors.New("the entry names no line: give mapi or capi patterns of the lines it explains (an entry without would explain every line of its aspect)")
	}
	return nil
}

// checkCatchAll rejects patterns that match lines no aspect has.
func (e *Entry) checkCatchAll() []error {
	var errs []error
	for _, side := range []struct {
		name string
		res  []*regexp.Regexp
		src  []string
	}{{"mapi", e.mapiRE, e.MAPI}, {"capi", e.capiRE, e.CAPI}} {
		for i, re := range side.res {
			if j := slices.IndexFunc(canaryLines, re.MatchString); j >= 0 {
				errs = append(errs, fmt.Errorf("%s pattern %q matches %q, a line no aspect has: it is a catch-all; name the lines the entry explains", side.name, side.src[i], canaryLines[j]))
			}
		}
	}
	return errs
}

func (e *Entry) checkPresentIn() error {
	switch e.PresentIn {
	case "":
		return nil
	case sideKeyA, sideKeyB:
	default:
		return fmt.Errorf("presentIn %q must be mapi or capi", e.PresentIn)
	}
	mapi, capi := e.sides()
	side, other := "A", capi
	if e.PresentIn == sideKeyB {
		side, other = "B", mapi
	}
	if other {
		return fmt.Errorf("presentIn %s says the aspect exists under side %s only, but the entry also names lines of the other flow; drop those or presentIn", e.PresentIn, side)
	}
	return nil
}

func (e *Entry) checkCountsDiffer() error {
	if e.CountsDiffer == "" {
		return nil
	}
	if strings.TrimSpace(e.CountsDiffer) == "" {
		return errors.New("countsDiffer must say why the flows have different numbers of these lines")
	}
	if mapi, capi := e.sides(); !mapi || !capi {
		return errors.New("countsDiffer applies to entries that explain lines of both flows only; drop it (one flow's lines are not counted against the other's)")
	}
	return nil
}

func (e *Entry) checkRequireAll() error {
	switch {
	case !e.RequireAll:
		return nil
	case e.Conditions != nil:
		return errors.New("requireAll applies to mapi and capi patterns, not conditions")
	case e.CountsDiffer != "":
		return errors.New("requireAll entries take no countsDiffer: their patterns name the lines each flow has")
	}
	return nil
}

func (e *Entry) checkLines() error {
	switch {
	case e.Lines == 0:
		return nil
	case e.Lines < 0:
		return fmt.Errorf("lines must be positive, not %d", e.Lines)
	case e.Conditions != nil || e.RequireAll || e.CountsDiffer != "":
		return errors.New("lines counts the lines of mapi and capi patterns; it takes no conditions, requireAll or countsDiffer")
	}
	return nil
}

// sides tells which sides' lines the entry can explain: side A's (mapi)
// and side B's (capi).
func (e *Entry) sides() (mapi, capi bool) {
	return len(e.MAPI) > 0 || e.conds.has(sideKeyA), len(e.CAPI) > 0 || e.conds.has(sideKeyB)
}

// twoSided tells whether the entry explains lines of both flows, and so
// must explain as many of each (unless CountsDiffer).
func (e *Entry) twoSided() bool {
	mapi, capi := e.sides()
	return mapi && capi
}

// coversConditions tells whether an aspect glob matches condition aspects
// (objects/<role>/conditions).
func coversConditions(glob string) bool {
	segs := strings.Split(glob, "/")
	if len(segs) != 3 {
		return false
	}
	first, _ := path.Match(segs[0], "objects")
	last, _ := path.Match(segs[2], "conditions")
	return first && last
}

// onlyConditions tells whether an aspect glob matches condition aspects
// and nothing else.
func onlyConditions(glob string) bool {
	segs := strings.Split(glob, "/")
	return len(segs) == 3 && segs[0] == "objects" && segs[2] == "conditions"
}
