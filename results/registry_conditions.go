package results

import (
	"errors"
	"fmt"
)

// ConditionsSpec explains condition lines (objects/<role>/conditions) by
// the exact end state of each condition type, per side (mapi: side A,
// capi: side B; see SidesOf) and lifecycle:
//
//	conditions:
//	  capi:
//	    live:    {Ready: "True", Deleting: "False"}
//	    deleted: {Deleting: "True(Deleting)"}
//	  mapi:
//	    live: {InstanceExists: "True"}
//
// A line is explained only if every condition in it is listed for its
// flow and lifecycle with exactly that status, and that reason where the
// value pins one ("True(Reason)"). Live states must be healthy (see
// registry_polarity.go), unless the entry says why its scenario ends
// unhealthy by design (Entry.UnhealthyByDesign).
type ConditionsSpec struct {
	MAPI *LifecycleConditions `json:"mapi,omitempty"`
	CAPI *LifecycleConditions `json:"capi,omitempty"`
}

// LifecycleConditions are the condition states an entry explains on
// objects that still existed at the end of the run (Live) and on objects
// seen gone (Deleted), by condition type.
type LifecycleConditions struct {
	Live    map[string]ConditionValue `json:"live,omitempty"`
	Deleted map[string]ConditionValue `json:"deleted,omitempty"`
}

// ConditionValue is one status, True, False or Unknown, optionally with a
// pinned reason, "True(Reason)". Quote it in YAML: an unquoted True is a
// boolean, which reads as "true" and is rejected.
type ConditionValue string

// compiledConditions are the expected states by side (sideKeyA or
// sideKeyB), lifecycle and type.
type compiledConditions map[Flow]map[string]map[string]conditionState

func (c compiledConditions) has(f Flow) bool { return len(c[f]) > 0 }

var conditionStatuses = map[string]bool{"True": true, "False": true, "Unknown": true}

func (spec *ConditionsSpec) compile(unhealthyByDesign bool) (compiledConditions, error) {
	out := compiledConditions{}
	var errs []error
	for _, side := range []struct {
		flow Flow
		lc   *LifecycleConditions
	}{{sideKeyA, spec.MAPI}, {sideKeyB, spec.CAPI}} {
		if side.lc == nil {
			continue
		}
		for _, l := range []struct {
			name string
			m    map[string]ConditionValue
		}{{lifecycleLive, side.lc.Live}, {lifecycleDeleted, side.lc.Deleted}} {
			states, err := compileStates(fmt.Sprintf("conditions.%s.%s", side.flow, l.name), l.name, l.m, unhealthyByDesign)
			errs = append(errs, err)
			if len(states) > 0 {
				if out[side.flow] == nil {
					out[side.flow] = map[string]map[string]conditionState{}
				}
				out[side.flow][l.name] = states
			}
		}
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	if len(out) == 0 {
		return nil, errors.New("conditions: name the condition types and the statuses the entry explains, per flow and lifecycle (live, deleted)")
	}
	return out, nil
}

func compileStates(where, lifecycle string, m map[string]ConditionValue, unhealthyByDesign bool) (map[string]conditionState, error) {
	states := map[string]conditionState{}
	var errs []error
	for _, typ := range sortedKeys(m) {
		st, ok := parseConditionState(string(m[typ]))
		if !ok || !conditionStatuses[st.Status] {
			errs = append(errs, fmt.Errorf("%s.%s: %q is not one status: write \"True\", \"False\" or \"Unknown\", quoted, optionally with a pinned reason, \"True(Reason)\"", where, typ, m[typ]))
			continue
		}
		if lifecycle == lifecycleLive {
			check := checkLivePolarity
			if unhealthyByDesign {
				check = checkKnownPolarity
			}
			if err := check(typ, st); err != nil {
				errs = append(errs, fmt.Errorf("%s.%s: %w", where, typ, err))
				continue
			}
		}
		states[typ] = st
	}
	return states, errors.Join(errs...)
}

// explains tells whether every condition of a condition line is listed for
// the flow and the line's lifecycle with exactly its status (and reason,
// where pinned).
func (c compiledConditions) explains(f Flow, line string) bool {
	lifecycle, conds, ok := parseConditionLine(line)
	if !ok {
		return false
	}
	want := c[f][lifecycle]
	if len(want) == 0 {
		return false
	}
	for typ, got := range conds {
		w, listed := want[typ]
		if !listed || w.Status != got.Status || (w.Reason != "" && w.Reason != got.Reason) {
			return false
		}
	}
	return true
}
