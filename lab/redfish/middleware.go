package redfish

import (
	"errors"
	"fmt"
	"log"
	"net/http"
	"runtime/debug"
	"strings"
	"time"

	"github.com/go-logr/logr"
)

// recorder remembers the status a handler sent, for the log and to know
// whether an error can still be answered.
type recorder struct {
	http.ResponseWriter
	status int
}

func (r *recorder) WriteHeader(status int) {
	if r.status == 0 {
		r.status = status
	}
	r.ResponseWriter.WriteHeader(status)
}

func (r *recorder) Write(b []byte) (int, error) {
	if r.status == 0 {
		r.status = http.StatusOK
	}
	return r.ResponseWriter.Write(b)
}

func (r *recorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }

// ServeHTTP answers one request. A panic in a handler is answered with a
// Redfish 500 and logged, never passed to net/http, which would drop the
// connection without a word.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	rec := &recorder{ResponseWriter: w}
	defer s.logRequest(rec, r, start)
	defer s.recoverPanic(rec, r)
	if err := s.dispatch(rec, r); err != nil {
		s.fail(rec, r, err)
	}
}

func (s *Server) recoverPanic(rec *recorder, r *http.Request) {
	v := recover()
	if v == nil {
		return
	}
	if v == http.ErrAbortHandler { //nolint:errorlint // sentinel compared as net/http does
		panic(v)
	}
	s.log.Error(fmt.Errorf("panic: %v", v), "Panic serving request", "method", r.Method, "path", r.URL.Path, "stack", string(debug.Stack()))
	if rec.status == 0 {
		writeError(rec, errInternal(fmt.Errorf("panic: %v", v)))
	}
}

// fail answers an error a handler returned.
func (s *Server) fail(rec *recorder, r *http.Request, err error) {
	var ae *apiError
	if !errors.As(err, &ae) {
		ae = errInternal(err)
	}
	if ae.status >= 500 {
		s.log.Error(err, "Request failed", "method", r.Method, "path", r.URL.Path, "status", ae.status)
	}
	if rec.status != 0 {
		return // already answered; nothing more to say on this connection
	}
	writeError(rec, ae)
}

func (s *Server) logRequest(rec *recorder, r *http.Request, start time.Time) {
	// Only the path: query strings and headers can carry credentials.
	s.log.V(1).Info("Request", "method", r.Method, "path", r.URL.Path, "status", rec.status,
		"duration", time.Since(start).Round(time.Microsecond).String(), "remote", r.RemoteAddr)
}

// newStdLogger routes net/http's own messages (TLS handshake errors) to the
// logger, at debug level.
func newStdLogger(l logr.Logger) *log.Logger {
	return log.New(logWriter{l}, "", 0)
}

type logWriter struct{ l logr.Logger }

func (w logWriter) Write(p []byte) (int, error) {
	w.l.V(1).Info("HTTP server", "message", strings.TrimSpace(string(p)))
	return len(p), nil
}
