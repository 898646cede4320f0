package results

import (
	"strings"
)

// Lifecycles a condition line starts with: whether the object still
// existed at the end of the run.
const (
	lifecycleLive    = "live"
	lifecycleDeleted = "deleted"
)

// conditionLine is the status and reason each condition type ended with,
// types in name order, after the object's lifecycle, e.g.
// "live: InfrastructureReady=True(Provisioned), NodeHealthy=True". The way
// there is left out: whether the first status a recorder saw was False or
// already True, detours (Validated False → True → False → True while hosts
// boot) and the interleaving of types depend on when independent
// controllers and the recorder polled, not on what the flow did; phases
// keep the order of a lifecycle. Reasons are scrubbed; messages and times
// are left out.
func conditionLine(obj Object, s *scrubber) string {
	final := map[string]conditionState{}
	for _, c := range obj.Conditions {
		final[c.Type] = conditionState{Status: c.Status, Reason: s.scrub(c.Reason)}
	}
	parts := make([]string, 0, len(final))
	for _, t := range sortedKeys(final) {
		parts = append(parts, t+"="+final[t].String())
	}
	return objectLifecycle(obj) + ": " + strings.Join(parts, ", ")
}

func objectLifecycle(obj Object) string {
	if obj.DeletedAt != nil {
		return lifecycleDeleted
	}
	return lifecycleLive
}

// conditionState is a condition's status and reason, written
// "Status(Reason)", or "Status" without a reason.
type conditionState struct {
	Status, Reason string
}

func (c conditionState) String() string {
	if c.Reason == "" {
		return c.Status
	}
	return c.Status + "(" + c.Reason + ")"
}

// parseConditionState reads "Status" or "Status(Reason)".
func parseConditionState(v string) (conditionState, bool) {
	status, rest, hasReason := strings.Cut(v, "(")
	if !hasReason {
		return conditionState{Status: v}, v != "" && !strings.Contains(v, ")")
	}
	reason, ok := strings.CutSuffix(rest, ")")
	if !ok || reason == "" || strings.ContainsAny(reason, "()") || status == "" {
		return conditionState{}, false
	}
	return conditionState{Status: status, Reason: reason}, true
}

// parseConditionLine reads a line conditionLine wrote back into its
// lifecycle and conditions. A line it cannot read (a reason with ", " or
// parentheses, which Kubernetes reasons never have) is reported as such,
// and no registry entry explains it.
func parseConditionLine(line string) (lifecycle string, conds map[string]conditionState, ok bool) {
	lifecycle, rest, found := strings.Cut(line, ": ")
	if !found || (lifecycle != lifecycleLive && lifecycle != lifecycleDeleted) {
		return "", nil, false
	}
	conds = map[string]conditionState{}
	for _, part := range strings.Split(rest, ", ") {
		typ, v, found := strings.Cut(part, "=")
		st, valid := parseConditionState(v)
		if !found || typ == "" || !valid {
			return "", nil, false
		}
		if _, dup := conds[typ]; dup {
			return "", nil, false
		}
		conds[typ] = st
	}
	return lifecycle, conds, true
}
