package redfish_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/paritylab/paritylab/lab/redfish"
)

func faultPath(system string) string { return "/paritylab/v1/systems/" + system + "/faults" }

func TestFaultStatus(t *testing.T) {
	f := newFixture(t)
	r := f.call(t, http.MethodPut, faultPath(f.ids[0]), `{"status":503}`)
	if r.status != http.StatusOK || r.body["status"] != float64(503) {
		t.Fatalf("PUT fault: %d %s", r.status, r.raw)
	}
	for _, path := range []string{f.systemPath(0), f.systemPath(0) + "/VirtualMedia/Cd", "/redfish/v1/Managers/" + f.ids[0], "/redfish/v1/Chassis/" + f.ids[0]} {
		expectError(t, f.call(t, http.MethodGet, path, ""), http.StatusServiceUnavailable, "ServiceTemporarilyUnavailable", "Fault injected")
	}
	// Other systems and collections are not affected; the fault stays.
	expectStatus(t, f.call(t, http.MethodGet, f.systemPath(1), ""), http.StatusOK)
	expectStatus(t, f.call(t, http.MethodGet, "/redfish/v1/Systems", ""), http.StatusOK)
	if r = f.call(t, http.MethodGet, faultPath(f.ids[0]), ""); r.body["status"] != float64(503) {
		t.Fatalf("GET fault %s", r.raw)
	}
	expectStatus(t, f.call(t, http.MethodDelete, faultPath(f.ids[0]), ""), http.StatusNoContent)
	expectStatus(t, f.call(t, http.MethodGet, f.systemPath(0), ""), http.StatusOK)
	if r = f.call(t, http.MethodGet, faultPath(f.ids[0]), ""); len(r.body) != 0 {
		t.Fatalf("GET fault after DELETE %s, want {}", r.raw)
	}
}

func TestFaultCount(t *testing.T) {
	f := newFixture(t)
	// By name: the admin API resolves it without a redirect.
	expectStatus(t, f.call(t, http.MethodPut, faultPath("node-0"), `{"status":500,"count":2}`), http.StatusOK)
	expectError(t, f.call(t, http.MethodGet, f.systemPath(0), ""), http.StatusInternalServerError, "InternalError")
	if r := f.call(t, http.MethodGet, faultPath(f.ids[0]), ""); r.body["count"] != float64(1) {
		t.Fatalf("remaining count %s, want 1", r.raw)
	}
	expectError(t, f.call(t, http.MethodGet, f.systemPath(0), ""), http.StatusInternalServerError, "InternalError")
	expectStatus(t, f.call(t, http.MethodGet, f.systemPath(0), ""), http.StatusOK)
	if _, ok, _ := f.srv.FaultOf(context.Background(), f.ids[0]); ok {
		t.Fatal("fault still set after its count ran out")
	}
}

func TestFaultIgnorePower(t *testing.T) {
	f := newFixture(t)
	if err := f.srv.SetFault(context.Background(), "node-0", redfish.Fault{IgnorePower: true, Count: 1}); err != nil {
		t.Fatal(err)
	}
	reset := f.systemPath(0) + "/Actions/ComputerSystem.Reset"
	// Other requests neither fail nor use up the count.
	expectStatus(t, f.call(t, http.MethodGet, f.systemPath(0), ""), http.StatusOK)
	expectStatus(t, f.call(t, http.MethodPost, reset, `{"ResetType":"On"}`), http.StatusNoContent)
	if got := f.system(t, 0).PowerState; got != redfish.PowerOff {
		t.Fatalf("PowerState %s after an ignored On", got)
	}
	expectStatus(t, f.call(t, http.MethodPost, reset, `{"ResetType":"On"}`), http.StatusNoContent)
	if got := f.system(t, 0).PowerState; got != redfish.PowerOn {
		t.Fatalf("PowerState %s after the fault ran out, want On", got)
	}
}

// TestFaultLatency proves the delay without timing: with a long latency, a
// request whose client gives up is abandoned, where it would otherwise
// succeed at once.
func TestFaultLatency(t *testing.T) {
	f := newFixture(t)
	expectStatus(t, f.call(t, http.MethodPut, faultPath(f.ids[0]), `{"latency":"10m"}`), http.StatusOK)
	ctx, cancel := context.WithCancel(context.Background())
	req := httptest.NewRequestWithContext(ctx, http.MethodGet, f.systemPath(0), nil)
	req.SetBasicAuth(testUser, testPassword)
	rec := httptest.NewRecorder()
	done := make(chan struct{})
	go func() { defer close(done); f.srv.ServeHTTP(rec, req) }()
	cancel()
	<-done
	r := decode(t, rec.Result())
	expectError(t, r, http.StatusServiceUnavailable, "ServiceTemporarilyUnavailable", "abandoned")
	// The other system answers at once.
	expectStatus(t, f.call(t, http.MethodGet, f.systemPath(1), ""), http.StatusOK)
	if err := f.srv.SetFault(context.Background(), f.ids[0], redfish.Fault{Latency: time.Millisecond}); err != nil {
		t.Fatal(err)
	}
	expectStatus(t, f.call(t, http.MethodGet, f.systemPath(0), ""), http.StatusOK)
}

func TestFaultAdminErrors(t *testing.T) {
	f := newFixture(t)
	for body, id := range map[string]string{
		`{"status":200}`:              "PropertyValueIncorrect",
		`{"status":"503"}`:            "PropertyValueTypeError",
		`{"latency":"soon"}`:          "PropertyValueIncorrect",
		`{"latency":2}`:               "PropertyValueTypeError",
		`{"latency":"11m"}`:           "PropertyValueIncorrect",
		`{"count":-1,"status":500}`:   "PropertyValueIncorrect",
		`{}`:                          "PropertyValueIncorrect",
		`{"status":503,"flaky":true}`: "PropertyUnknown",
		`{"status":`:                  "MalformedJSON",
	} {
		expectError(t, f.call(t, http.MethodPut, faultPath(f.ids[0]), body), http.StatusBadRequest, id)
	}
	expectError(t, f.call(t, http.MethodPut, faultPath("nope"), `{"status":503}`), http.StatusNotFound, "ResourceNotFound")
	expectError(t, f.send(t, http.MethodPut, faultPath(f.ids[0]), `{"status":503}`, nil), http.StatusUnauthorized, "NoValidSession")
	if _, ok, _ := f.srv.FaultOf(context.Background(), f.ids[0]); ok {
		t.Fatal("a rejected fault was set")
	}
	if err := f.srv.SetFault(context.Background(), "nope", redfish.Fault{Status: 503}); err == nil {
		t.Fatal("SetFault on an unknown system succeeded")
	}
	if err := f.srv.SetFault(context.Background(), f.ids[0], redfish.Fault{}); err == nil {
		t.Fatal("SetFault of an empty fault succeeded")
	}
}
