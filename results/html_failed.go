package results

import (
	"fmt"
	"strings"
)

// A failed flow is the first thing a reader must see: its headline goes
// to the report's header, the top of its scenario and its matrix row.

// flowFailedLine is the headline of a flow that did not succeed, e.g.
// "MAPI flow failed: driver: timed out waiting (outcome timedOut)".
func flowFailedLine(s ScenarioResult, f Flow) string {
	title := s.Sides().Title(f)
	o := s.Observation(f)
	if o == nil {
		return title + " flow failed: it left no observation"
	}
	msgs := make([]string, 0, len(o.Errors))
	for _, e := range o.Errors {
		msgs = append(msgs, e.Source+": "+e.Message)
	}
	text := "no error reported"
	if len(msgs) > 0 {
		text = strings.Join(msgs, "; ")
	}
	return fmt.Sprintf("%s flow failed: %s (outcome %s)", title, text, orNone(string(o.Outcome)))
}

// flowFailedLines are the headlines of every failed flow of a scenario.
func flowFailedLines(s ScenarioResult) []string {
	var out []string
	for _, f := range s.FailedFlows() {
		out = append(out, flowFailedLine(s, f))
	}
	return out
}
