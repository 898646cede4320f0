package apiproxy

// discovery translates a discovery document for a client: an
// APIGroupList loses the hub's own standard groups (the private ones take
// their names, and a client must not see two), then names the private
// ones as standard; an APIResourceList names its group version as
// standard. Aggregated discovery is not translated: the proxy asks the hub
// for the legacy documents.
func discovery(m map[string]any) {
	switch m["kind"] {
	case "APIGroupList":
		groups, _ := m["groups"].([]any)
		kept := make([]any, 0, len(groups))
		for _, e := range groups {
			g, ok := e.(map[string]any)
			if !ok {
				continue
			}
			if name, _ := g["name"].(string); isStandard(name) {
				continue
			}
			apiGroup(g)
			kept = append(kept, g)
		}
		m["groups"] = kept
	case "APIGroup":
		apiGroup(m)
	case "APIResourceList":
		if gv, ok := m["groupVersion"].(string); ok {
			m["groupVersion"], _ = apiVersion(gv, ToStandard)
		}
	}
}

// apiGroup names a private APIGroup as standard: its name, its versions'
// and its preferred version's groupVersion.
func apiGroup(g map[string]any) {
	if name, ok := g["name"].(string); ok {
		g["name"], _ = group(name, ToStandard)
	}
	versions, _ := g["versions"].([]any)
	if pv, ok := g["preferredVersion"].(map[string]any); ok {
		versions = append(versions, pv)
	}
	for _, e := range versions {
		if v, ok := e.(map[string]any); ok {
			if gv, ok := v["groupVersion"].(string); ok {
				v["groupVersion"], _ = apiVersion(gv, ToStandard)
			}
		}
	}
}
