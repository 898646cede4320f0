package results

import (
	"strconv"
	"strings"
)

// nodeRole is the role of the identity-only records of Nodes (name, UID,
// creation, deletion). They make nodes/identity and resolve links; they
// have no objects/node/* aspects, since the Nodes' state is compared from
// Observation.Nodes.
const nodeRole = "node"

// objectAspects compares objects role by role; objects without a role are
// not compared.
func objectAspects(o *Observation, s *scrubber) []Aspect {
	byRole := map[string][]Object{}
	for _, obj := range o.Objects {
		if obj.Role != "" && obj.Role != nodeRole {
			byRole[obj.Role] = append(byRole[obj.Role], obj)
		}
	}
	links := newNodeLinks(o)
	var as []Aspect
	for _, role := range sortedKeys(byRole) {
		as = append(as, roleAspects(role, byRole[role], links, s)...)
	}
	return as
}

func roleAspects(role string, objs []Object, links nodeLinks, s *scrubber) []Aspect {
	prefix := "objects/" + role + "/"
	as := []Aspect{{Name: prefix + "count", Lines: []string{strconv.Itoa(len(objs))}}}
	var conds, meta, props, linkLines, replicas []string
	for _, obj := range objs {
		if len(obj.Conditions) > 0 {
			conds = append(conds, conditionLine(obj, s))
		}
		meta = append(meta, prefixed("label ", normalizeLabels(obj.Labels, s))...)
		meta = append(meta, prefixed("annotation ", normalizeLabels(obj.Annotations, s))...)
		props = append(props, normalizeLabels(obj.Properties, s)...)
		if obj.ProviderID != "" || obj.NodeRef != "" {
			linkLines = append(linkLines, links.line(obj))
		}
		if len(obj.Replicas) > 0 {
			replicas = append(replicas, replicaLine(obj))
		}
	}
	for _, a := range []Aspect{
		{Name: prefix + "phases", Lines: phaseLines(objs)},
		{Name: prefix + "conditions", Lines: conds},
		{Name: prefix + "metadata", Lines: meta},
		{Name: prefix + "properties", Lines: props},
		{Name: prefix + "links", Lines: linkLines},
		{Name: prefix + "replicas", Lines: replicas},
		{Name: prefix + "provisioning", Lines: provisioningLines(objs)},
	} {
		if len(a.Lines) > 0 {
			as = append(as, a)
		}
	}
	return as
}

// phaseLines is each object's phase sequence, except for Interchangeable
// objects: which of them went through which phases depends on the random
// pick of a pool, so they count as the transitions they made together.
func phaseLines(objs []Object) []string {
	var lines []string
	var pooled [][]string
	for _, obj := range objs {
		if len(obj.Phases) == 0 && obj.DeletedAt == nil {
			continue
		}
		if obj.Interchangeable {
			pooled = append(pooled, phaseSequence(obj))
			continue
		}
		lines = append(lines, strings.Join(phaseSequence(obj), " → "))
	}
	return append(lines, transitionLines(pooled)...)
}

// phaseSequence is the object's phases with repeats collapsed, and
// "(deleted)" when it was seen gone, e.g. Provisioning, Running, (deleted).
func phaseSequence(obj Object) []string {
	seq := make([]string, 0, len(obj.Phases)+1)
	for _, p := range obj.Phases {
		seq = append(seq, p.Phase)
	}
	seq = collapseRepeats(seq)
	if obj.DeletedAt != nil {
		seq = append(seq, "(deleted)")
	}
	return seq
}

// collapseRepeats drops consecutive duplicates.
func collapseRepeats(seq []string) []string {
	var out []string
	for _, v := range seq {
		if len(out) == 0 || out[len(out)-1] != v {
			out = append(out, v)
		}
	}
	return out
}

// transitionLines is one "from → to" line per step of every sequence: the
// multiset of steps a pool made, whichever member made them.
func transitionLines(seqs [][]string) []string {
	var lines []string
	for _, seq := range seqs {
		for i := 1; i < len(seq); i++ {
			lines = append(lines, seq[i-1]+" → "+seq[i])
		}
	}
	return lines
}

func prefixed(prefix string, lines []string) []string {
	for i := range lines {
		lines[i] = prefix + lines[i]
	}
	return lines
}
