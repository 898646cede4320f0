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
// node): per Node name, "joined" (its first UID was created after the run
// started), "kept" (it existed before, one UID throughout) or "recreated"
// (the name had two UIDs or more), with " → removed" when the last of
// them was deleted. Absent when the flow recorded no Node identities.
func nodeIdentityAspects(o *Observation) []Aspect {
	byName := map[string][]Object{}
	for _, obj := range o.Objects {
		if obj.Role == nodeRole {
			byName[obj.Name] = append(byName[obj.Name], obj)
		}
	}
	if len(byName) == 0 {
		return nil
	}
	lines := make([]string, 0, len(byName))
	for _, name := range sortedKeys(byName) {
		lines = append(lines, nodeIdentity(byName[name], o))
	}
	return []Aspect{{Name: "nodes/identity", Lines: lines}}
}

func nodeIdentity(records []Object, o *Observation) string {
	sort.SliceStable(records, func(i, j int) bool { return recordBefore(records[i], records[j]) })
	uids := map[string]bool{}
	for i, r := range records {
		uid := r.UID
		if uid == "" {
			uid = "#" + strconv.Itoa(i) // a record without UID is an identity of its own
		}
		uids[uid] = true
	}
	word := "kept"
	switch {
	case len(uids) >= 2:
		word = "recreated"
	case records[0].CreatedAt.After(o.StartedAt):
		word = "joined"
	}
	if records[len(records)-1].DeletedAt != nil {
		word += " → removed"
	}
	return word
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
