package redfish_test

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/paritylab/paritylab/lab/redfish"
)

func TestOperationsAdminAPI(t *testing.T) {
	f := newFixture(t)
	// A fresh system has an empty list, not null; by name, without a
	// redirect.
	r := f.call(t, http.MethodGet, operationsPath("node-0"), "")
	expectStatus(t, r, http.StatusOK)
	if strings.ReplaceAll(r.raw, " ", "") != `{"operations":[]}` {
		t.Fatalf("empty log %s, want {\"operations\":[]}", r.raw)
	}
	expectStatus(t, f.call(t, http.MethodPost, f.systemPath(0)+"/Actions/ComputerSystem.Reset", `{"ResetType":"On"}`), http.StatusNoContent)
	ops := decodeOperations(t, f.call(t, http.MethodGet, operationsPath(f.ids[0]), ""))
	expectOperations(t, ops, "power:On")
	if r.header.Get("Content-Type") == "" || r.header.Get("OData-Version") != "4.0" {
		t.Fatalf("headers %v, want those of every Redfish answer", r.header)
	}
	// RFC 3339 without fractions and with an offset (escaped +) work too.
	sec := ops[0].At.Truncate(time.Second)
	for _, since := range []string{sec.Format(time.RFC3339), sec.In(time.FixedZone("", 2*3600)).Format(time.RFC3339)} {
		got := decodeOperations(t, f.call(t, http.MethodGet, operationsPath(f.ids[0])+"?since="+url.QueryEscape(since), ""))
		expectOperations(t, got, "power:On")
	}
}

func TestOperationsAdminErrors(t *testing.T) {
	f := newFixture(t)
	path := operationsPath(f.ids[0])
	expectError(t, f.call(t, http.MethodGet, operationsPath("no-such-system"), ""), http.StatusNotFound, "ResourceNotFound", "no-such-system")
	expectError(t, f.call(t, http.MethodGet, path+"?since=yesterday", ""), http.StatusBadRequest, "QueryParameterValueFormatError", "yesterday", "since", "RFC 3339")
	// An unescaped + arrives as a space; the message says how to send it.
	expectError(t, f.call(t, http.MethodGet, path+"?since=2024-01-01T00:00:00+02:00", ""), http.StatusBadRequest, "QueryParameterValueFormatError", "%2B")
	expectError(t, f.call(t, http.MethodGet, path+"?since=2024-01-01T00:00:00Z&since=2025-01-01T00:00:00Z", ""), http.StatusBadRequest, "QueryParameterValueFormatError", "once")
	expectError(t, f.call(t, http.MethodGet, path+"?from=2024-01-01T00:00:00Z", ""), http.StatusBadRequest, "QueryNotSupportedOnResource", "from")
	expectError(t, f.call(t, http.MethodGet, path+"?since=%zz", ""), http.StatusBadRequest, "QueryParameterValueFormatError")
	r := f.call(t, http.MethodDelete, path, "")
	expectError(t, r, http.StatusMethodNotAllowed, "OperationNotAllowed")
	if r.header.Get("Allow") != "GET, HEAD" {
		t.Fatalf("Allow %q, want GET, HEAD", r.header.Get("Allow"))
	}
	expectError(t, f.send(t, http.MethodGet, path, "", nil), http.StatusUnauthorized, "NoValidSession")
	// The log stays readable while the system is faulted.
	if err := f.srv.SetFault(context.Background(), f.ids[0], redfish.Fault{Status: http.StatusInternalServerError}); err != nil {
		t.Fatal(err)
	}
	expectStatus(t, f.call(t, http.MethodGet, path, ""), http.StatusOK)
	if _, err := f.srv.Operations(context.Background(), "no-such-system", time.Time{}); !errors.Is(err, redfish.ErrNotFound) {
		t.Fatalf("Operations of an unknown system: %v, want ErrNotFound", err)
	}
}

func TestFetchOperationsErrors(t *testing.T) {
	srv, _, ids := listening(t)
	ctx := context.Background()
	_, err := redfish.FetchOperations(ctx, redfish.FetchOperationsInput{URL: srv.URL(), SystemID: "no-such-system", Username: testUser, Password: testPassword})
	var re *redfish.ResponseError
	if !errors.As(err, &re) || re.StatusCode != http.StatusNotFound || re.Code != "Base.1.16.ResourceNotFound" || !strings.Contains(re.Message, "no-such-system") {
		t.Fatalf("unknown system: %v, want a 404 ResourceNotFound ResponseError", err)
	}
	if !strings.HasPrefix(err.Error(), "fetch operations of system no-such-system: HTTP 404") {
		t.Fatalf("error %q lacks its context", err)
	}
	_, err = redfish.FetchOperations(ctx, redfish.FetchOperationsInput{URL: srv.URL(), SystemID: ids[0], Username: testUser, Password: "xyzzy-not-it"})
	if !errors.As(err, &re) || re.StatusCode != http.StatusUnauthorized || strings.Contains(err.Error(), "xyzzy") {
		t.Fatalf("wrong password: %v, want a 401 ResponseError without the password", err)
	}
	for _, base := range []string{"", "ftp://127.0.0.1:1", srv.URL() + "/redfish/v1", "http://admin:secret@127.0.0.1:1"} {
		_, err := redfish.FetchOperations(ctx, redfish.FetchOperationsInput{URL: base, SystemID: ids[0]})
		if err == nil || strings.Contains(err.Error(), "secret") {
			t.Fatalf("base URL %q: %v, want an error without credentials", base, err)
		}
	}
	if _, err := redfish.FetchOperations(ctx, redfish.FetchOperationsInput{URL: srv.URL()}); err == nil {
		t.Fatal("no system ID: no error")
	}
}

func decodeOperations(t *testing.T, r response) []redfish.Operation {
	t.Helper()
	expectStatus(t, r, http.StatusOK)
	list, ok := r.body["operations"].([]any)
	if !ok {
		t.Fatalf("no operations list in %s", r.raw)
	}
	out := make([]redfish.Operation, len(list))
	for i, item := range list {
		m, _ := item.(map[string]any)
		at, _ := m["at"].(string)
		op, _ := m["operation"].(string)
		when, err := time.Parse(time.RFC3339Nano, at)
		if err != nil || !strings.HasSuffix(at, "Z") || op == "" || len(m) != 2 {
			t.Fatalf("entry %d %v: want {at: RFC 3339 UTC, operation}", i, item)
		}
		out[i] = redfish.Operation{At: when, Operation: op}
	}
	return out
}
