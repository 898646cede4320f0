package results

import (
	"strconv"
	"strings"
)

// objectAspects compares objects role by role; objects without a role are
// not compared.
func objectAspects(objs []Object, s *scrubber) []Aspect {
	byRole := map[string][]Object{}
	for _, obj := range objs {
		if obj.Role != "" {
			byRole[obj.Role] = append(byRole[obj.Role], obj)
		}
	}
	var as []Aspect
	for _, role := range sortedKeys(byRole) {
		as = append(as, roleAspects(role, byRole[role], s)...)
	}
	return as
}

func roleAspects(role string, objs []Object, s *scrubber) []Aspect {
	prefix := "objects/" + role + "/"
	as := []Aspect{{Name: prefix + "count", Lines: []string{strconv.Itoa(len(objs))}}}
	var phases, conds, meta, props []string
	for _, obj := range objs {
		if len(obj.Phases) > 0 || obj.DeletedAt != nil {
			phases = append(phases, phaseLine(obj))
		}
		if len(obj.Conditions) > 0 {
			conds = append(conds, conditionLine(obj.Conditions))
		}
		meta = append(meta, prefixed("label ", normalizeLabels(obj.Labels, s))...)
		meta = append(meta, prefixed("annotation ", normalizeLabels(obj.Annotations, s))...)
		props = append(props, normalizeLabels(obj.Properties, s)...)
	}
	for _, a := range []Aspect{
		{Name: prefix + "phases", Lines: phases},
		{Name: prefix + "conditions", Lines: conds},
		{Name: prefix + "metadata", Lines: meta},
		{Name: prefix + "properties", Lines: props},
	} {
		if len(a.Lines) > 0 {
			as = append(as, a)
		}
	}
	return as
}

// phaseLine is the object's phase sequence with repeats collapsed, e.g.
// "Provisioning → Provisioned → Running → (deleted)".
func phaseLine(obj Object) string {
	var seq []string
	for _, p := range obj.Phases {
		if len(seq) == 0 || seq[len(seq)-1] != p.Phase {
			seq = append(seq, p.Phase)
		}
	}
	if obj.DeletedAt != nil {
		seq = append(seq, "(deleted)")
	}
	return strings.Join(seq, " → ")
}

// conditionLine is the status each condition type ended with, types in
// name order, e.g. "InfrastructureReady=True, NodeHealthy=True". The way
// there is left out: whether the first status a recorder saw was False
// or already True, detours (Validated False → True → False → True while
// hosts boot) and the interleaving of types depend on when independent
// controllers and the recorder polled, not on what the flow did; phases
// keep the order of a lifecycle. Reasons, messages and times are left out.
func conditionLine(cs []ConditionTransition) string {
	final := map[string]string{}
	for _, c := range cs {
		final[c.Type] = c.Status
	}
	seq := make([]string, 0, len(final))
	for _, t := range sortedKeys(final) {
		seq = append(seq, t+"="+final[t])
	}
	return strings.Join(seq, ", ")
}

func prefixed(prefix string, lines []string) []string {
	for i := range lines {
		lines[i] = prefix + lines[i]
	}
	return lines
}
