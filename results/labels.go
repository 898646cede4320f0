package results

import (
	"sort"
	"strings"
)

// supersededKeys are deprecated label keys dropped when their successor is
// present: the kubelet sets both, and only one carries information.
var supersededKeys = map[string]string{
	"beta.kubernetes.io/arch":                  "kubernetes.io/arch",
	"beta.kubernetes.io/os":                    "kubernetes.io/os",
	"beta.kubernetes.io/instance-type":         "node.kubernetes.io/instance-type",
	"failure-domain.beta.kubernetes.io/zone":   "topology.kubernetes.io/zone",
	"failure-domain.beta.kubernetes.io/region": "topology.kubernetes.io/region",
}

// normalizeLabels renders a label (or annotation, or property) map as sorted
// "key=value" lines: keys trimmed, deprecated duplicates dropped, values
// scrubbed of names, UIDs, addresses and times (by key when the key carries
// a hash or random ID, see randomValueKeys); a key with an empty value is
// just "key".
func normalizeLabels(m map[string]string, s *scrubber) []string {
	if len(m) == 0 {
		return nil
	}
	lines := make([]string, 0, len(m))
	for k, v := range m {
		k = strings.TrimSpace(k)
		if succ, ok := supersededKeys[k]; ok {
			if _, has := m[succ]; has {
				continue
			}
		}
		lines = append(lines, labelLine(labelKey(k, s), s.scrubValue(k, strings.TrimSpace(v))))
	}
	sort.Strings(lines)
	return lines
}

// labelKey is a label key as reports show it. A prefixed key
// (example.com/name) is an API's own and stays; an unprefixed key is
// sometimes made of names a run generates (HyperShift selects a
// NodePool's Machines by <infra-id>-<cluster>-<pool>, as key and value)
// and is scrubbed like a value.
func labelKey(k string, s *scrubber) string {
	if strings.Contains(k, "/") {
		return k
	}
	return s.scrub(k)
}

func labelLine(k, v string) string {
	if v == "" {
		return k
	}
	return k + "=" + v
}

// nodeRoles returns the node's roles, from Roles or else from its
// node-role.kubernetes.io/<role> and kubernetes.io/role labels, sorted and
// without duplicates.
func nodeRoles(n Node) []string {
	set := map[string]bool{}
	for _, r := range n.Roles {
		set[strings.TrimSpace(r)] = true
	}
	if len(set) == 0 {
		for k, v := range n.Labels {
			if r, ok := strings.CutPrefix(k, "node-role.kubernetes.io/"); ok && r != "" {
				set[r] = true
			}
			if k == "kubernetes.io/role" && v != "" {
				set[v] = true
			}
		}
	}
	return sortedKeys(set)
}

// providerIDScheme reduces a providerID to its scheme, e.g. "metal3://".
func providerIDScheme(id string) string {
	id = strings.TrimSpace(id)
	switch id {
	case "", "(none)":
		return "(none)"
	case "(no scheme)":
		return id
	}
	scheme, _, ok := strings.Cut(id, "://")
	if !ok {
		return "(no scheme)"
	}
	return strings.ToLower(scheme) + "://"
}
