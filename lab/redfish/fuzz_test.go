package redfish_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr/funcr"

	"github.com/paritylab/paritylab/lab/redfish"
	"github.com/paritylab/paritylab/lab/redfish/memory"
	"github.com/paritylab/paritylab/lab/redfish/redfishtest"
)

// Bits of FuzzHandler's mode byte.
const (
	fuzzBasic        = 1 << iota // valid Basic credentials
	fuzzWrongBasic               // wrong Basic credentials
	fuzzToken                    // log in and send the session token
	fuzzFault503                 // node-0 answers 503
	fuzzFaultIgnore              // node-0 ignores power actions
	fuzzFaultLatency             // node-0 answers after 1ms
	fuzzOData3                   // OData-Version: 3.0
)

// noNetwork is the download client of the fuzzed server: an InsertMedia
// must never reach a real service on this host.
type noNetwork struct{}

func (noNetwork) RoundTrip(*http.Request) (*http.Response, error) {
	return nil, errors.New("fuzz: no network")
}

// FuzzHandler feeds arbitrary requests to the handler. Whatever comes in,
// it must not panic (the recover middleware would answer 500, which a
// memory backend never causes otherwise), every 4xx/5xx must carry a
// complete Redfish error body, and every other body must be JSON.
func FuzzHandler(f *testing.F) {
	node0, node1 := memory.NameUUID("node-0"), memory.NameUUID("node-1")
	sys := "/redfish/v1/Systems/" + node0
	for _, s := range []struct {
		method, path, body string
		mode               byte
	}{
		{"GET", "/redfish/v1/", "", 0},
		{"GET", "/redfish", "", 0},
		{"GET", "/redfish/v1/Systems", "", fuzzBasic},
		{"GET", sys, "", fuzzToken},
		{"GET", sys, "", fuzzBasic | fuzzFault503},
		{"GET", "/redfish/v1/Systems/node-1", "", fuzzBasic},
		{"PATCH", sys, `{"Boot":{"BootSourceOverrideTarget":"Cd","BootSourceOverrideEnabled":"Once","BootSourceOverrideMode":"UEFI"}}`, fuzzBasic},
		{"PATCH", sys, `{"IndicatorLED":"Lit","Boot":{"BootSourceOverrideTarget":null}}`, fuzzBasic},
		{"PATCH", sys, `{"AssetTag":"x"}`, fuzzBasic},
		{"POST", sys + "/Actions/ComputerSystem.Reset", `{"ResetType":"On"}`, fuzzBasic | fuzzFaultIgnore},
		{"POST", sys + "/Actions/ComputerSystem.Reset", `{"ResetType":"Nmi"}`, fuzzBasic},
		{"POST", sys + "/Actions/ComputerSystem.Reset", `{"ResetType":`, fuzzBasic},
		{"GET", sys + "/EthernetInterfaces/nic0", "", fuzzBasic | fuzzFaultLatency},
		{"GET", sys + "/VirtualMedia/Cd", "", fuzzBasic},
		{"GET", sys + "/Processors/CPU1", "", fuzzBasic},
		{"GET", sys + "/Storage/virtio/Drives/vda", "", fuzzBasic | fuzzFaultLatency},
		{"GET", sys + "/SimpleStorage/virtio", "", fuzzToken},
		{"POST", sys + "/VirtualMedia/Cd/Actions/VirtualMedia.InsertMedia", `{"Image":"http://127.0.0.1:8080/boot.iso","UserName":"u","Password":"p","TransferProtocolType":"HTTP"}`, fuzzBasic},
		{"POST", sys + "/VirtualMedia/Cd/Actions/VirtualMedia.InsertMedia", `{"Image":"http://192.0.2.1/boot.iso"}`, fuzzBasic},
		{"POST", sys + "/VirtualMedia/Floppy/Actions/VirtualMedia.EjectMedia", "", fuzzBasic},
		{"GET", "/redfish/v1/Managers/" + node1, "", fuzzBasic | fuzzOData3},
		{"GET", "/redfish/v1/Chassis/" + node1, "", fuzzWrongBasic},
		{"POST", "/redfish/v1/SessionService/Sessions", `{"UserName":"admin","Password":"x"}`, 0},
		{"DELETE", "/redfish/v1/SessionService/Sessions/0123", "", fuzzToken},
		{"PUT", "/paritylab/v1/systems/node-0/faults", `{"status":503,"latency":"1ms","ignorePower":true,"count":2}`, fuzzBasic},
		{"DELETE", "/paritylab/v1/systems/" + node0 + "/faults", "", fuzzBasic},
		{"BREW", "/redfish/v1/Systems//x/../%2e", "\x00", fuzzBasic},
	} {
		f.Add(s.method, s.path, s.body, s.mode)
	}
	htpasswd := fuzzHtpasswd(f)
	imageDir := f.TempDir()
	f.Fuzz(func(t *testing.T, method, path, body string, mode byte) {
		srv, panicked := fuzzServer(t, htpasswd, imageDir, mode)
		req := fuzzRequest(t, srv, method, path, body, mode)
		rec := httptest.NewRecorder()
		srv.ServeHTTP(rec, req)
		if *panicked {
			t.Fatalf("%s %q %q: handler panicked", method, path, body)
		}
		checkFuzzAnswer(t, rec.Result(), method, path, body)
	})
}

func fuzzHtpasswd(f *testing.F) redfish.Credentials {
	creds, err := redfish.LoadHtpasswd(redfishtest.WriteHtpasswd(f, map[string]string{testUser: testPassword}))
	if err != nil {
		f.Fatal(err)
	}
	return creds
}

func fuzzServer(t *testing.T, creds redfish.Credentials, imageDir string, mode byte) (*redfish.Server, *bool) {
	backend, err := memory.New(memory.Options{Systems: memory.Generate("node", 2)})
	if err != nil {
		t.Fatal(err)
	}
	panicked := new(bool)
	logger := funcr.New(func(_, args string) {
		if strings.Contains(args, "Panic serving request") {
			*panicked = true
		}
	}, funcr.Options{})
	srv, err := redfish.New(redfish.Options{Backend: backend, Credentials: creds, ImageDir: imageDir,
		HTTPClient: &http.Client{Transport: noNetwork{}}, Logger: logger})
	if err != nil {
		t.Fatal(err)
	}
	var fault redfish.Fault
	if mode&fuzzFault503 != 0 {
		fault.Status = http.StatusServiceUnavailable
	}
	fault.IgnorePower = mode&fuzzFaultIgnore != 0
	if mode&fuzzFaultLatency != 0 {
		fault.Latency = time.Millisecond
	}
	if fault != (redfish.Fault{}) {
		if err := srv.SetFault(context.Background(), "node-0", fault); err != nil {
			t.Fatal(err)
		}
	}
	return srv, panicked
}

func fuzzRequest(t *testing.T, srv *redfish.Server, method, path, body string, mode byte) *http.Request {
	u, err := url.ParseRequestURI(path)
	if err != nil {
		u = &url.URL{Path: path}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	t.Cleanup(cancel)
	req := (&http.Request{Method: method, URL: u, Header: http.Header{}, Host: "127.0.0.1", RemoteAddr: "127.0.0.1:1234",
		Body: io.NopCloser(strings.NewReader(body)), ContentLength: int64(len(body))}).WithContext(ctx)
	switch {
	case mode&fuzzToken != 0:
		req.Header.Set("X-Auth-Token", fuzzLogin(t, srv))
	case mode&fuzzBasic != 0:
		req.SetBasicAuth(testUser, testPassword)
	case mode&fuzzWrongBasic != 0:
		req.SetBasicAuth(testUser, body)
	}
	if mode&fuzzOData3 != 0 {
		req.Header.Set("OData-Version", "3.0")
	}
	return req
}

func fuzzLogin(t *testing.T, srv *redfish.Server) string {
	req := httptest.NewRequest(http.MethodPost, "/redfish/v1/SessionService/Sessions", strings.NewReader(`{"UserName":"`+testUser+`","Password":"`+testPassword+`"}`))
	rec := httptest.NewRecorder()
	srv.ServeHTTP(rec, req)
	if rec.Code != http.StatusCreated {
		t.Fatalf("login: %d %s", rec.Code, rec.Body)
	}
	return rec.Header().Get("X-Auth-Token")
}

func checkFuzzAnswer(t *testing.T, resp *http.Response, method, path, body string) {
	raw, _ := io.ReadAll(resp.Body)
	where := method + " " + strings.ToValidUTF8(path, "?") + " " + strings.ToValidUTF8(body, "?")
	switch {
	case resp.StatusCode == http.StatusInternalServerError:
		t.Fatalf("%s: HTTP 500 from the memory backend: %s", where, raw)
	case resp.StatusCode >= 400:
		var parsed map[string]any
		if err := json.Unmarshal(raw, &parsed); err != nil {
			t.Fatalf("%s: HTTP %d body is not JSON: %v: %s", where, resp.StatusCode, err, raw)
		}
		if problem := redfishErrorProblem(parsed); problem != "" {
			t.Fatalf("%s: HTTP %d: %s: %s", where, resp.StatusCode, problem, raw)
		}
	case resp.StatusCode >= 300:
		if resp.Header.Get("Location") == "" {
			t.Fatalf("%s: HTTP %d without Location", where, resp.StatusCode)
		}
	case len(raw) > 0 && method != http.MethodHead:
		if !json.Valid(raw) {
			t.Fatalf("%s: HTTP %d body is not JSON: %s", where, resp.StatusCode, raw)
		}
	}
}
