package results

import (
	"sort"
	"strconv"
	"strings"
)

// nodeAspects compares the workload cluster's Nodes. They are always
// present, so "no nodes" is compared too.
func nodeAspects(nodes []Node, s *scrubber) []Aspect {
	var roles, ready, labels, annotations, taints, schemes, addrs []string
	for _, n := range nodes {
		roles = append(roles, orNone(strings.Join(nodeRoles(n), ",")))
		ready = append(ready, readyWord(n.Ready))
		labels = append(labels, normalizeLabels(n.Labels, s)...)
		annotations = append(annotations, normalizeLabels(n.Annotations, s)...)
		for _, t := range n.Taints {
			taints = append(taints, s.scrub(labelLine(t.Key, t.Value)+":"+t.Effect))
		}
		schemes = append(schemes, providerIDScheme(n.ProviderID))
		addrs = append(addrs, addressTypes(n.Addresses))
	}
	return []Aspect{
		{Name: "nodes/count", Lines: []string{strconv.Itoa(len(nodes))}},
		{Name: "nodes/roles", Lines: roles},
		{Name: "nodes/ready", Lines: ready},
		{Name: "nodes/labels", Lines: labels},
		{Name: "nodes/annotations", Lines: annotations},
		{Name: "nodes/taints", Lines: taints},
		{Name: "nodes/providerID", Lines: schemes},
		{Name: "nodes/addresses", Lines: addrs},
	}
}

// nodeIdentityAspects is nodes/identity, from the node records (role
// node): one line per Node object (per UID): "kept" (it existed when the
// run started and still does), "joined" (created during the run), with
// " → removed" when it was deleted. A Node recreated under the same name
// shows as "kept → removed" and "joined". Lines are per object, not per
// name: which host (so which Node name) a scale-up takes is random, so
// whether a name came back is chance, while how many Nodes joined, stayed
// and went is what the flow did. Absent when the flow recorded no Node
// identities.
func nodeIdentityAspects(o *Observation) []Aspect {
	var lines []string
	for _, obj := range o.Objects {
		if obj.Role != nodeRole {
			continue
		}
		word := "kept"
		if obj.CreatedAt.After(o.StartedAt) {
			word = "joined"
		}
		if obj.DeletedAt != nil {
			word += " → removed"
		}
		lines = append(lines, word)
	}
	if len(lines) == 0 {
		return nil
	}
	return []Aspect{{Name: "nodes/identity", Lines: lines}}
}

func readyWord(ready bool) string {
	if ready {
		return "Ready"
	}
	return "NotReady"
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}

// addressTypes keeps which kinds of address a node has, not the addresses.
func addressTypes(addrs []Address) string {
	set := map[string]bool{}
	for _, a := range addrs {
		set[a.Type] = true
	}
	types := sortedKeys(set)
	sort.Strings(types)
	return orNone(strings.Join(types, ","))
}
