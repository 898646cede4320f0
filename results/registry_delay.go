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
	// Flow is the flow that waits: mapi or capi.
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
	if e.Delay.Flow != FlowMAPI && e.Delay.Flow != FlowCAPI {
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

// explainDelays judges a duration that differs beyond the tolerance again
// with the waits of the applicable delay entries taken off the flows that
// have them: within the tolerance then, it is a KnownDivergence of those
// entries; otherwise it stays a Regression, with a note of what the
// entries allowed.
func (r *Registry) explainDelays(scenario string, ar *AspectResult, opts Options) {
	if r == nil || ar.Verdict != Regression || ar.MAPIDuration == nil || ar.CAPIDuration == nil {
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
	m, c = lessWait(m, c, waits[FlowMAPI]), lessWait(c, m, waits[FlowCAPI])
	differ, note := compareDurations(m, c, opts)
	ids := make([]string, 0, len(entries))
	for _, e := range entries {
		ids = append(ids, e.ID)
	}
	ar.Note += fmt.Sprintf("; without the waits of %s: %s", strings.Join(ids, ", "), note)
	if differ {
		return
	}
	ar.Verdict, ar.Known = KnownDivergence, entries
}

// waitShows: the entry is a delay of a flow, the aspect is its phase, and
// that flow took longer there than the other, whether or not beyond the
// tolerance: the wait it names shows, though on a fast run it needs no
// explaining. A delay whose flow is not the slower one is stale.
func (e *Entry) waitShows(scenario string, a AspectResult) bool {
	if e.Delay == nil || !e.appliesTo(scenario, a.Aspect) || a.MAPIDuration == nil || a.CAPIDuration == nil {
		return false
	}
	if e.Delay.Flow == FlowCAPI {
		return *a.CAPIDuration > *a.MAPIDuration
	}
	return *a.MAPIDuration > *a.CAPIDuration
}
