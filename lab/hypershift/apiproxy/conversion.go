package apiproxy

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
)

// ConversionShim serves the conversion webhook of the private CRDs with a
// conversion webhook of the standard ones (Cluster API's, which knows
// only cluster.x-k8s.io): the ConversionReview goes to it translated to
// the standard groups (the objects, their references and the desired
// version) and its answer comes back translated to the private ones. The
// enhancement keeps v1beta1 stored for HyperShift; the lab stores
// v1beta2 as the platform does, so both directions are exercised.
func ConversionShim(standard http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, err := io.ReadAll(io.LimitReader(r.Body, maxBody))
		_ = r.Body.Close()
		if err == nil {
			raw, err = Body(raw, ToStandard)
		}
		if err != nil {
			writeStatus(w, http.StatusBadRequest, "BadRequest", "conversion shim: "+err.Error())
			return
		}
		in := r.Clone(r.Context())
		in.Body, in.ContentLength = io.NopCloser(bytes.NewReader(raw)), int64(len(raw))
		rec := httptest.NewRecorder()
		standard.ServeHTTP(rec, in)
		out, err := Body(rec.Body.Bytes(), ToPrivate)
		if err != nil {
			writeStatus(w, http.StatusInternalServerError, "InternalError", "conversion shim: "+err.Error())
			return
		}
		for k, v := range rec.Header() {
			w.Header()[k] = v
		}
		w.Header().Set("Content-Length", strconv.Itoa(len(out)))
		w.WriteHeader(rec.Code)
		_, _ = w.Write(out)
	})
}
