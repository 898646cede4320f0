package redfish

import (
	"net/http"
	"net/url"
	"slices"
	"strings"
)

// handler serves one method of one route. A returned error becomes the
// Redfish error response; a handler that returns nil has answered.
type handler func(w http.ResponseWriter, r *http.Request, rq *request) error

// request is what the server learned about a request before its handler
// runs.
type request struct {
	params map[string]string
	// system is the system a route with a {system} segment addresses.
	system *System
	// fault is the fault that applies to this request, if any.
	fault Fault
}

func (rq *request) param(name string) string { return rq.params[name] }

// route is a URL pattern with a handler per method. Segments in braces
// capture the segment they match.
type route struct {
	segs    []string
	methods map[string]handler
	// public routes need no credentials (the service root, the version
	// document, and session login).
	public map[string]bool
	// kind is the resource type named by {system}, for 404 messages;
	// empty when the route has no {system} segment.
	kind string
	// admin routes resolve system names silently and are never faulted:
	// faults must stay removable.
	admin bool
	// reset marks the power action, the only request IgnorePower affects.
	reset bool
}

// newRoute makes a route for a pattern like "/redfish/v1/Systems/{system}".
func newRoute(pattern string) *route {
	return &route{segs: splitPath(pattern), methods: map[string]handler{}, public: map[string]bool{}}
}

func (rt *route) on(method string, h handler) *route {
	rt.methods[method] = h
	return rt
}

// open lets every method of the route through without credentials, so
// even a wrong method there answers 405 rather than 401.
func (rt *route) open() *route {
	rt.public[""] = true
	return rt
}

// openFor lets one method through without credentials.
func (rt *route) openFor(method string) *route {
	rt.public[method] = true
	return rt
}

// system marks a route whose {system} segment names a system of kind.
func (rt *route) system(kind string) *route {
	rt.kind = kind
	return rt
}

func (rt *route) resetAction() *route {
	rt.reset = true
	return rt
}

func (rt *route) adminAPI() *route {
	rt.admin = true
	return rt
}

// handlerFor returns the handler of a method; HEAD is served as GET.
func (rt *route) handlerFor(method string) handler {
	if method == http.MethodHead {
		method = http.MethodGet
	}
	return rt.methods[method]
}

func (rt *route) isPublic(method string) bool {
	if method == http.MethodHead {
		method = http.MethodGet
	}
	return rt.public[""] || rt.public[method]
}

func (rt *route) allowed() []string {
	out := make([]string, 0, len(rt.methods)+1)
	for m := range rt.methods {
		out = append(out, m)
	}
	if rt.methods[http.MethodGet] != nil {
		out = append(out, http.MethodHead)
	}
	slices.Sort(out)
	return out
}

// match returns the params of path against the route, or false.
func (rt *route) match(segs []string) (map[string]string, bool) {
	if len(segs) != len(rt.segs) {
		return nil, false
	}
	var params map[string]string
	for i, p := range rt.segs {
		if name, ok := strings.CutPrefix(p, "{"); ok {
			if segs[i] == "" {
				return nil, false
			}
			if params == nil {
				params = map[string]string{}
			}
			params[strings.TrimSuffix(name, "}")] = segs[i]
			continue
		}
		if segs[i] != p {
			return nil, false
		}
	}
	return params, true
}

// systemIndex is the position of the {system} segment, or -1.
func (rt *route) systemIndex() int {
	return slices.Index(rt.segs, "{system}")
}

func findRoute(routes []*route, path string) (*route, map[string]string) {
	segs := splitPath(path)
	for _, rt := range routes {
		if params, ok := rt.match(segs); ok {
			return rt, params
		}
	}
	return nil, nil
}

// splitPath splits a URL path into segments, ignoring one trailing slash:
// Redfish clients use /redfish/v1/ and /redfish/v1 interchangeably.
func splitPath(path string) []string {
	path = strings.TrimPrefix(path, "/")
	path = strings.TrimSuffix(path, "/")
	if path == "" {
		return nil
	}
	return strings.Split(path, "/")
}

// replaceSegment rebuilds a URL path with segment i replaced, for the
// name-to-ID redirect.
func replaceSegment(path string, i int, value string) string {
	segs := splitPath(path)
	out := make([]string, len(segs))
	for j, s := range segs {
		if j == i {
			s = value
		}
		out[j] = url.PathEscape(s)
	}
	return "/" + strings.Join(out, "/")
}
