package redfish_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
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
		`{"status":200}`:                 "PropertyValueIncorrect",
		`{"status":"503"}`:               "PropertyValueTypeError",
		`{"latency":"soon"}`:             "PropertyValueIncorrect",
		`{"latency":2}`:                  "PropertyValueTypeError",
		`{"latency":"11m"}`:              "PropertyValueIncorrect",
		`{"count":-1,"status":500}`:      "PropertyValueIncorrect",
		`{}`:                             "PropertyValueIncorrect",
		`{"status":503,"flaky":true}`:    "PropertyUnknown",
		`{"status":`:                     "MalformedJSON",
		`{"hang":"sometimes"}`:           "PropertyValueIncorrect",
		`{"hang":true}`:                  "PropertyValueTypeError",
		`{"hang":"always","count":1}`:    "PropertyValueIncorrect",
		`{"hang":"always","status":503}`: "PropertyValueIncorrect",
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

// TestFaultHangUntilPowerOff: the system stays On with its guest frozen,
// ignores the power button, and a power-off ends the hang, so the next
// power-on runs normally. The operation log shows when it failed.
func TestFaultHangUntilPowerOff(t *testing.T) {
	f := newFixture(t)
	reset := f.systemPath(0) + "/Actions/ComputerSystem.Reset"
	expectStatus(t, f.call(t, http.MethodPost, reset, `{"ResetType":"On"}`), http.StatusNoContent)
	r := f.call(t, http.MethodPut, faultPath(f.ids[0]), `{"hang":"untilPowerOff"}`)
	if r.status != http.StatusOK || r.body["hang"] != "untilPowerOff" {
		t.Fatalf("PUT hang: %d %s", r.status, r.raw)
	}
	f.expectFrozen(t, 0, true)
	// The BMC itself answers as usual.
	expectStatus(t, f.call(t, http.MethodGet, f.systemPath(0), ""), http.StatusOK)
	expectStatus(t, f.call(t, http.MethodPost, reset, `{"ResetType":"GracefulShutdown"}`), http.StatusNoContent)
	if got := f.system(t, 0).PowerState; got != redfish.PowerOn {
		t.Fatalf("PowerState %s after GracefulShutdown of a hung system, want On", got)
	}
	f.expectFrozen(t, 0, true)
	expectStatus(t, f.call(t, http.MethodPost, reset, `{"ResetType":"ForceOff"}`), http.StatusNoContent)
	if _, ok, _ := f.srv.FaultOf(context.Background(), f.ids[0]); ok {
		t.Fatal("the hang outlived the power-off")
	}
	expectStatus(t, f.call(t, http.MethodPost, reset, `{"ResetType":"On"}`), http.StatusNoContent)
	f.expectFrozen(t, 0, false)
	ops, err := f.srv.Operations(context.Background(), f.ids[0], time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"power:On", "fault:hang", "power:GracefulShutdown", "power:ForceOff", "power:On"}
	if got := operationNames(ops); !slices.Equal(got, want) {
		t.Fatalf("operations %v, want %v", got, want)
	}
}

// TestFaultHangAlways: a system that is off takes the fault without
// freezing; every power-on freezes it again until the fault is cleared.
func TestFaultHangAlways(t *testing.T) {
	f := newFixture(t)
	reset := f.systemPath(0) + "/Actions/ComputerSystem.Reset"
	if err := f.srv.SetFault(context.Background(), "node-0", redfish.Fault{Hang: redfish.HangAlways}); err != nil {
		t.Fatal(err)
	}
	f.expectFrozen(t, 0, false)
	for _, rt := range []string{"On", "ForceRestart"} {
		expectStatus(t, f.call(t, http.MethodPost, reset, `{"ResetType":"`+rt+`"}`), http.StatusNoContent)
		f.expectFrozen(t, 0, true)
	}
	expectStatus(t, f.call(t, http.MethodPost, reset, `{"ResetType":"ForceOff"}`), http.StatusNoContent)
	if _, ok, _ := f.srv.FaultOf(context.Background(), f.ids[0]); !ok {
		t.Fatal("a hang that always lasts ended with a power-off")
	}
	expectStatus(t, f.call(t, http.MethodDelete, faultPath(f.ids[0]), ""), http.StatusNoContent)
	expectStatus(t, f.call(t, http.MethodPost, reset, `{"ResetType":"On"}`), http.StatusNoContent)
	f.expectFrozen(t, 0, false)
	// The other system never hung.
	f.expectFrozen(t, 1, false)
}

func (f *fixture) expectFrozen(t *testing.T, i int, want bool) {
	t.Helper()
	got, err := f.backend.Frozen(f.ids[i])
	if err != nil {
		t.Fatal(err)
	}
	if got != want {
		t.Fatalf("system %d frozen %v, want %v", i, got, want)
	}
}

func operationNames(ops []redfish.Operation) []string {
	out := make([]string, len(ops))
	for i, op := range ops {
		out[i] = op.Operation
	}
	return out
}

// TestPutFaultClient sets and clears faults over HTTP as scenarios do,
// and sees the emulator's errors as ResponseErrors.
func TestPutFaultClient(t *testing.T) {
	srv, _, ids := listening(t)
	ctx := context.Background()
	in := redfish.AdminInput{URL: srv.URL(), SystemID: ids[0], Username: testUser, Password: testPassword}
	if err := redfish.PutFault(ctx, in, redfish.Fault{Hang: redfish.HangAlways}); err != nil {
		t.Fatal(err)
	}
	if f, ok, _ := srv.FaultOf(ctx, ids[0]); !ok || f.Hang != redfish.HangAlways {
		t.Fatalf("fault %+v %v after PutFault, want a hang", f, ok)
	}
	if err := redfish.DeleteFault(ctx, in); err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := srv.FaultOf(ctx, ids[0]); ok {
		t.Fatal("fault still set after DeleteFault")
	}
	var re *redfish.ResponseError
	err := redfish.PutFault(ctx, in, redfish.Fault{Hang: redfish.HangAlways, Count: 2})
	if !errors.As(err, &re) || re.StatusCode != http.StatusBadRequest || !strings.Contains(re.Message, "set it alone") {
		t.Fatalf("invalid fault: %v, want a 400 saying what to fix", err)
	}
	wrong := in
	wrong.Password = "xyzzy-not-it"
	if err := redfish.PutFault(ctx, wrong, redfish.Fault{Status: 503}); !errors.As(err, &re) || re.StatusCode != http.StatusUnauthorized || strings.Contains(err.Error(), "xyzzy") {
		t.Fatalf("wrong password: %v, want a 401 without the password", err)
	}
}
