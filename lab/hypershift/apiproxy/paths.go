package apiproxy

import "strings"

// crdPath prefixes the CustomResourceDefinitions a client names by
// <plural>.<group>.
const crdPath = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/"

// Path translates a request path: /apis/<group>[/...] of a mapped group,
// and the name of a mapped group's CustomResourceDefinition. Other paths
// pass through.
func Path(p string, d Direction) string {
	if rest, ok := strings.CutPrefix(p, crdPath); ok {
		name, sub, _ := strings.Cut(rest, "/")
		t := crdName(name, d)
		if sub != "" {
			t += "/" + sub
		}
		return crdPath + t
	}
	rest, ok := strings.CutPrefix(p, "/apis/")
	if !ok {
		return p
	}
	g, tail, hasTail := strings.Cut(rest, "/")
	t, mapped := group(g, d)
	if !mapped {
		return p
	}
	if hasTail {
		return "/apis/" + t + "/" + tail
	}
	return "/apis/" + t
}

// crdName translates <plural>.<group>, the name of a CRD.
func crdName(name string, d Direction) string {
	plural, g, ok := strings.Cut(name, ".")
	if !ok {
		return name
	}
	if t, mapped := group(g, d); mapped {
		return plural + "." + t
	}
	return name
}
