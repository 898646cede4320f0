package redfish

import (
	"context"
	"errors"
	"net/http"
	"time"
)

// dispatch routes a request: version header, authentication, route and
// method, the system it addresses (with the name alias), its fault, then
// the handler.
func (s *Server) dispatch(w http.ResponseWriter, r *http.Request) error {
	if v := r.Header.Get("OData-Version"); v != "" && v != "4.0" {
		return newError(http.StatusPreconditionFailed, "HeaderInvalid",
			"Header 'OData-Version' is invalid: this service speaks OData 4.0.",
			"Send OData-Version: 4.0 or omit the header.", "OData-Version")
	}
	rt, params := findRoute(s.routes, r.URL.Path)
	if rt == nil || !rt.isPublic(r.Method) {
		if err := s.auth.check(r); err != nil {
			return err
		}
	}
	if rt == nil {
		return errURINotFound(r.URL.Path)
	}
	h := rt.handlerFor(r.Method)
	if h == nil {
		return errMethodNotAllowed(r.Method, r.URL.Path, rt.allowed())
	}
	rq := &request{params: params}
	if rt.kind != "" {
		done, err := s.loadSystem(w, r, rt, rq)
		if done || err != nil {
			return err
		}
	}
	return h(w, r, rq)
}

// loadSystem finds the system a route addresses. A name instead of an ID
// is answered with a redirect to the ID's URL, as sushy-tools does for
// libvirt domain names; admin routes take either silently. done reports
// that the request has been answered.
func (s *Server) loadSystem(w http.ResponseWriter, r *http.Request, rt *route, rq *request) (done bool, err error) {
	ctx := r.Context()
	key := rq.param("system")
	sys, err := s.backend.System(ctx, key)
	if errors.Is(err, ErrNotFound) {
		id, rerr := s.backend.Resolve(ctx, key)
		if errors.Is(rerr, ErrNotFound) {
			return false, errResourceNotFound(rt.kind, key)
		}
		if rerr != nil {
			return false, backendError(rerr, "GeneralError", "ResourceInUse")
		}
		if !rt.admin {
			redirect(w, r, replaceSegment(r.URL.Path, rt.systemIndex(), id))
			return true, nil
		}
		sys, err = s.backend.System(ctx, id)
	}
	if err != nil {
		return false, backendError(err, "GeneralError", "ResourceInUse")
	}
	rq.system = sys
	if rt.admin {
		return false, nil
	}
	return false, s.applyFault(ctx, rt, rq)
}

func redirect(w http.ResponseWriter, r *http.Request, path string) {
	if r.URL.RawQuery != "" {
		path += "?" + r.URL.RawQuery
	}
	w.Header().Set("Location", path)
	w.Header().Set("OData-Version", "4.0")
	w.WriteHeader(http.StatusTemporaryRedirect)
}

// applyFault delays or fails a request as the system's fault says, and
// hands the rest (IgnorePower) to the handler.
func (s *Server) applyFault(ctx context.Context, rt *route, rq *request) error {
	f, ok := s.faults.take(rq.system.ID, rt.reset)
	if !ok {
		return nil
	}
	if f.Latency > 0 {
		t := time.NewTimer(f.Latency)
		defer t.Stop()
		select {
		case <-t.C:
		case <-ctx.Done():
			return backendError(ctx.Err(), "", "")
		}
	}
	if f.Status != 0 {
		return errInjected(f.Status, rq.system.ID)
	}
	rq.fault = f
	return nil
}
