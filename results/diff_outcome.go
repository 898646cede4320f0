package results

import (
	"fmt"
	"strings"
)

// Aspects no registry entry may explain (the loader rejects entries whose
// aspect glob matches them): a flow that did not succeed, a flow that left
// no observation and scenarios whose flows declare different milestones
// are failures of the run, not behaviours of a flow.
const (
	outcomeAspect     = "outcome"
	observationAspect = "observation"
	milestonesAspect  = "milestones"
)

// gateOutcome makes the outcome aspect a Regression whenever a flow did not
// succeed, also when both failed alike: two flows failing the same way say
// nothing about whether CAPI does what MAPI does.
func gateOutcome(ar *AspectResult, p Pair) {
	var failed []string
	sides := p.Sides()
	for i, o := range []*Observation{p.A, p.B} {
		if o.Outcome != OutcomeSucceeded {
			failed = append(failed, failureText([]string{sides.TitleA, sides.TitleB}[i], o))
		}
	}
	if len(failed) == 0 {
		return
	}
	ar.Verdict = Regression
	ar.Note = strings.Join(failed, "; ")
	if len(failed) == 2 {
		ar.Note = "both flows did not succeed: " + ar.Note
	}
}

// failureText says that a flow, by its title, did not succeed, how it
// ended and what errors it reported.
func failureText(title string, o *Observation) string {
	text := fmt.Sprintf("the %s flow did not succeed (%s)", title, orNone(string(o.Outcome)))
	msgs := make([]string, 0, len(o.Errors))
	for _, e := range o.Errors {
		msgs = append(msgs, e.Source+": "+e.Message)
	}
	if len(msgs) == 0 {
		return text + " and reported no error"
	}
	return text + ": " + strings.Join(msgs, "; ")
}

// FlowFailed tells whether the flow did not succeed in this scenario: it
// left no observation, or its outcome is not succeeded. f is one of the
// scenario's sides.
func (s ScenarioResult) FlowFailed(f Flow) bool {
	o := s.Observation(f)
	return o == nil || o.Outcome != OutcomeSucceeded
}

// FailedFlows are the flows that did not succeed, side A first.
func (s ScenarioResult) FailedFlows() []Flow {
	var out []Flow
	for _, f := range s.Sides().Flows() {
		if s.FlowFailed(f) {
			out = append(out, f)
		}
	}
	return out
}

// Failed tells whether the scenario fails: a flow did not succeed, or an
// aspect is a regression.
func (s ScenarioResult) Failed() bool {
	return len(s.FailedFlows()) > 0 || s.Count(Regression) > 0
}

// FlowFailure says why a flow failed: no observation, or its outcome and
// errors; empty when the flow succeeded.
func (s ScenarioResult) FlowFailure(f Flow) string {
	if !s.FlowFailed(f) {
		return ""
	}
	title := s.Sides().Title(f)
	o := s.Observation(f)
	if o == nil {
		return fmt.Sprintf("the %s flow left no observation", title)
	}
	return failureText(title, o)
}
