package results

import (
	"errors"
	"fmt"
	"strings"
	"time"
)

// maxDelay bounds what one entry may take off a duration: a wait longer
// than this is no constant of upstream code but a flow that hangs.
const maxDelay = 5 * time.Minute

// DelaySpec is a wait one flow has by upstream design and the other does
// not, in one milestone phase: a fixed period (a cooldown, a poll
// interval) the entry names with its upstream reference.
type DelaySpec struct {
	// Flow is the side that waits: mapi (side A) or capi (side B) of the
	// entry's scenarios (see SidesOf).
	Flow Flow `json:"flow"`
	// UpTo is the longest the wait lasts, a Go duration such as 60s: the
	// flow's duration is judged with up to this much taken off, never
	// below the other flow's.
	UpTo string `json:"upTo"`
}

// delayAspectPrefix names the duration aspects.
const delayAspectPrefix = "durations/"

// checkDelay holds a delay entry to one phase and nothing else: its
// aspect names one milestone phase (not a glob, not the total, which the
// entry covers by containing the phase), and it names no lines.
func (e *Entry) checkDelay() error {
	if e.Delay == nil {
		return nil
	}
	var errs []error
	phase, ok := strings.CutPrefix(e.Aspect, delayAspectPrefix)
	switch {
	case !ok || phase == "" || strings.ContainsAny(phase, `*?[\/`):
		errs = append(errs, fmt.Errorf("a delay explains one milestone phase: aspect %q must be durations/<phase>, without glob characters", e.Aspect))
	case phase == "total":
		errs = append(errs, errors.New("a delay names the phase it happens in, not durations/total: the total is judged with the delays of its phases"))
	}
	if e.Delay.Flow != sideKeyA && e.Delay.Flow != sideKeyB {
		errs = append(errs, fmt.Errorf("delay.flow %q must be mapi or capi", e.Delay.Flow))
	}
	d, err := time.ParseDuration(e.Delay.UpTo)
	switch {
	case err != nil:
		errs = append(errs, fmt.Errorf("delay.upTo %q: %w", e.Delay.UpTo, err))
	case d <= 0 || d > maxDelay:
		errs = append(errs, fmt.Errorf("delay.upTo %s must be more than 0 and at most %s", d, maxDelay))
	}
	e.delay = d
	if len(e.MAPI)+len(e.CAPI)+len(e.Except) > 0 || e.Conditions != nil || e.PresentIn != "" || e.CountsDiffer != "" || e.RequireAll || e.Lines != 0 {
		errs = append(errs, errors.New("a delay entry explains a duration and names no lines: drop mapi, capi, except, conditions, presentIn, countsDiffer, requireAll and lines"))
	}
	return errors.Join(errs...)
}

// lessWait is d with up to wait taken off, but never below other: a
// flow that is not the slower one keeps its duration.
func lessWait(d, other, wait time.Duration) time.Duration {
	return max(min(d, other), d-wait)
}

// appliesToTotal: a delay entry also covers durations/total of its
// scenarios, which contains its phase.
func (e *Entry) appliesToTotal(scenario, aspect string) bool {
	return e.Delay != nil && aspect == delayAspectPrefix+"total" && e.inScenario(scenario)
}

// explainDelays judges a duration against the applicable delay entries.
// Beyond the tolerance, it is judged again with their waits taken off the
// flows that have them: within the tolerance then, it is a
// KnownDivergence of those entries; otherwise it stays a Regression, with
// a note of what the entries allowed. Within the tolerance already, it is
// a KnownDivergence of the entries whose flow was the slower one: the
// wait shows whether or not the run was slow enough to need it, so that
// the same difference gets the same verdict run after run (a ratio
// tolerance would pass a 33 s wait after a 69 s phase and not after a
// 39 s one).
func (r *Registry) explainDelays(scenario string, ar *AspectResult, opts Options) {
	if r == nil || ar.Verdict == KnownDivergence || ar.MAPIDuration == nil || ar.CAPIDuration == nil {
		return
	}
	var entries []*Entry
	waits := map[Flow]time.Duration{}
	for _, e := range r.Entries {
		if e.Delay != nil && (e.appliesTo(scenario, ar.Aspect) || e.appliesToTotal(scenario, ar.Aspect)) {
			entries = append(entries, e)
			waits[e.Delay.Flow] += e.delay
		}
	}
	if len(entries) == 0 {
		return
	}
	m, c := *ar.MAPIDuration, *ar.CAPIDuration
	sides := SidesOf(scenario)
	if ar.Verdict == Parity {
		explainWaitWithinTolerance(sides, ar, entries, m, c)
		return
	}
	m, c = lessWait(m, c, waits[sideKeyA]), lessWait(c, m, waits[sideKeyB])
	differ, note := compareDurations(sides, m, c, opts)
	ar.Note += fmt.Sprintf("; without the waits of %s: %s", entryIDs(entries), note)
	if differ {
		return
	}
	ar.Verdict, ar.Known = KnownDivergence, entries
}

// explainWaitWithinTolerance makes a duration within the tolerance a
// KnownDivergence of the delay entries of the slower flow, if any.
func explainWaitWithinTolerance(sides Sides, ar *AspectResult, entries []*Entry, m, c time.Duration) {
	slower := sideKeyB
	switch {
	case m == c:
		return
	case m > c:
		slower = sideKeyA
	}
	var known []*Entry
	for _, e := range entries {
		if e.Delay.Flow == slower {
			known = append(known, e)
		}
	}
	if len(known) == 0 {
		return
	}
	ar.Verdict, ar.Known = KnownDivergence, known
	ar.Note += fmt.Sprintf("; within the tolerance, the %s flow slower as %s allow", sides.keyTitle(slower), entryIDs(known))
}

// waitShows: the entry is a delay of a flow, the aspect is its phase, and
// that flow took longer there than the other, whether or not beyond the
// tolerance: the wait it names shows, though on a fast run it needs no
// explaining. A delay whose flow is not the slower one is stale.
func (e *Entry) waitShows(scenario string, a AspectResult) bool {
	if e.Delay == nil || !e.appliesTo(scenario, a.Aspect) || a.MAPIDuration == nil || a.CAPIDuration == nil {
		return false
	}
	if e.Delay.Flow == sideKeyB {
		return *a.CAPIDuration > *a.MAPIDuration
	}
	return *a.MAPIDuration > *a.CAPIDuration
}
