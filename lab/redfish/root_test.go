package redfish_test

import (
	"net/http"
	"slices"
	"strings"
	"testing"
)

func TestServiceRootNeedsNoCredentials(t *testing.T) {
	f := newFixture(t)
	for _, path := range []string{"/redfish/v1", "/redfish/v1/"} {
		r := f.send(t, http.MethodGet, path, "", nil)
		expectStatus(t, r, http.StatusOK)
		for _, k := range []string{"@odata.id", "@odata.type", "Id", "Name", "RedfishVersion", "UUID"} {
			if s, _ := r.body[k].(string); s == "" {
				t.Errorf("%s: service root has no %s", path, k)
			}
		}
		for k, want := range map[string]string{"Systems": "/redfish/v1/Systems", "Managers": "/redfish/v1/Managers", "Chassis": "/redfish/v1/Chassis"} {
			if got := get(r.body, k, "@odata.id"); got != want {
				t.Errorf("%s: %s link %v, want %s", path, k, got, want)
			}
		}
		if got := get(r.body, "Links", "Sessions", "@odata.id"); got != "/redfish/v1/SessionService/Sessions" {
			t.Errorf("%s: Links.Sessions %v", path, got)
		}
		if r.header.Get("OData-Version") != "4.0" {
			t.Errorf("%s: OData-Version header %q", path, r.header.Get("OData-Version"))
		}
	}
	r := f.send(t, http.MethodGet, "/redfish", "", nil)
	expectStatus(t, r, http.StatusOK)
	if r.body["v1"] != "/redfish/v1/" {
		t.Fatalf("/redfish answered %s, want the v1 link", r.raw)
	}
}

// TestEveryResourceIsComplete crawls every @odata.id reachable from the
// service root and checks the fields every Redfish resource carries.
func TestEveryResourceIsComplete(t *testing.T) {
	f := newFixture(t)
	seen := map[string]bool{}
	queue := []string{"/redfish/v1/"}
	for len(queue) > 0 {
		path := queue[0]
		queue = queue[1:]
		if seen[path] {
			continue
		}
		seen[path] = true
		r := f.call(t, http.MethodGet, path, "")
		expectStatus(t, r, http.StatusOK)
		checkResource(t, path, r.body)
		queue = append(queue, odataLinks(r.body)...)
	}
	// Root, 3 collections, 2x (system, manager, chassis, 2 NIC/media
	// collections, nic0, Cd, Floppy), sessions.
	if len(seen) < 20 {
		t.Fatalf("crawled only %d resources: %v", len(seen), seen)
	}
}

func checkResource(t *testing.T, path string, body map[string]any) {
	t.Helper()
	want := []string{"@odata.id", "@odata.type", "Name"}
	if _, isCollection := body["Members"]; !isCollection {
		want = append(want, "Id")
	}
	for _, k := range want {
		if s, _ := body[k].(string); s == "" {
			t.Errorf("%s has no %s", path, k)
		}
	}
	id, _ := body["@odata.id"].(string)
	if strings.TrimSuffix(id, "/") != strings.TrimSuffix(path, "/") {
		t.Errorf("%s has @odata.id %q", path, id)
	}
}

// odataLinks collects the @odata.id references below the top level.
func odataLinks(v any) []string {
	var out []string
	var walk func(v any, top bool)
	walk = func(v any, top bool) {
		switch x := v.(type) {
		case map[string]any:
			for k, val := range x {
				if s, ok := val.(string); ok && k == "@odata.id" && !top {
					out = append(out, s)
				}
				walk(val, false)
			}
		case []any:
			for _, val := range x {
				walk(val, false)
			}
		}
	}
	walk(v, true)
	return out
}

func TestAuthentication(t *testing.T) {
	f := newFixture(t)
	path := f.systemPath(0)

	r := f.send(t, http.MethodGet, path, "", nil)
	expectError(t, r, http.StatusUnauthorized, "NoValidSession", "no credentials")
	if !strings.HasPrefix(r.header.Get("WWW-Authenticate"), "Basic") {
		t.Fatalf("401 without WWW-Authenticate: Basic: %v", r.header)
	}
	for _, creds := range [][2]string{{testUser, "wrong"}, {"mallory", testPassword}} {
		r = f.send(t, http.MethodGet, path, "", func(r *http.Request) { r.SetBasicAuth(creds[0], creds[1]) })
		expectError(t, r, http.StatusUnauthorized, "NoValidSession", "rejected")
	}
	// Twice: the second answer comes from the verified-credentials cache.
	for range 2 {
		expectStatus(t, f.call(t, http.MethodGet, path, ""), http.StatusOK)
	}
	// Unknown paths and wrong methods of protected routes say 401 first.
	expectStatus(t, f.send(t, http.MethodGet, "/redfish/v1/Nope", "", nil), http.StatusUnauthorized)
	expectStatus(t, f.send(t, http.MethodPost, path, "", nil), http.StatusUnauthorized)
	// The service root answers a wrong method with 405, not 401.
	expectError(t, f.send(t, http.MethodPost, "/redfish/v1/", "", nil), http.StatusMethodNotAllowed, "OperationNotAllowed")
}

func TestSessions(t *testing.T) {
	f := newFixture(t)
	login := `{"UserName":"` + testUser + `","Password":"` + testPassword + `"}`
	r := f.send(t, http.MethodPost, "/redfish/v1/SessionService/Sessions", login, nil)
	expectStatus(t, r, http.StatusCreated)
	token, location := r.header.Get("X-Auth-Token"), r.header.Get("Location")
	if token == "" || !strings.HasPrefix(location, "/redfish/v1/SessionService/Sessions/") {
		t.Fatalf("login answered token %q location %q", token, location)
	}
	if r.body["UserName"] != testUser || r.body["Id"] == "" {
		t.Fatalf("session body %s", r.raw)
	}
	withToken := func(tok string) func(*http.Request) {
		return func(r *http.Request) { r.Header.Set("X-Auth-Token", tok) }
	}
	expectStatus(t, f.send(t, http.MethodGet, f.systemPath(0), "", withToken(token)), http.StatusOK)
	r = f.send(t, http.MethodGet, "/redfish/v1/SessionService/Sessions", "", withToken(token))
	if get(r.body, "Members@odata.count") != float64(1) {
		t.Fatalf("sessions collection %s", r.raw)
	}
	expectStatus(t, f.send(t, http.MethodGet, "/redfish/v1/SessionService", "", withToken(token)), http.StatusOK)
	expectStatus(t, f.send(t, http.MethodGet, location, "", withToken(token)), http.StatusOK)
	expectError(t, f.send(t, http.MethodGet, f.systemPath(0), "", withToken("forged")), http.StatusUnauthorized, "NoValidSession", "X-Auth-Token")

	expectStatus(t, f.send(t, http.MethodDelete, location, "", withToken(token)), http.StatusNoContent)
	expectError(t, f.send(t, http.MethodGet, f.systemPath(0), "", withToken(token)), http.StatusUnauthorized, "NoValidSession")
	expectError(t, f.call(t, http.MethodDelete, location, ""), http.StatusNotFound, "ResourceNotFound")
}

func TestSessionLoginErrors(t *testing.T) {
	f := newFixture(t)
	for body, want := range map[string][2]string{
		`{"UserName":"admin","Password":"nope"}`:                     {"401", "NoValidSession"},
		`{"UserName":"admin"}`:                                       {"400", "PropertyMissing"},
		`{"UserName":"admin","Password":7}`:                          {"400", "PropertyValueTypeError"},
		`{"UserName":"admin","Password":"x","Role":"Administrator"}`: {"400", "PropertyUnknown"},
		`{"UserName":`: {"400", "MalformedJSON"},
	} {
		r := f.send(t, http.MethodPost, "/redfish/v1/SessionService/Sessions", body, nil)
		status := map[string]int{"400": 400, "401": 401}[want[0]]
		expectError(t, r, status, want[1])
		if r.header.Get("X-Auth-Token") != "" {
			t.Fatalf("%s: failed login returned a token", body)
		}
	}
}

func TestUnknownPathAndMethod(t *testing.T) {
	f := newFixture(t)
	expectError(t, f.call(t, http.MethodGet, "/redfish/v1/Nope", ""), http.StatusNotFound, "InvalidURI", "/redfish/v1/Nope")
	expectError(t, f.call(t, http.MethodGet, "/", ""), http.StatusNotFound, "InvalidURI")
	r := f.call(t, http.MethodDelete, f.systemPath(0), "")
	expectError(t, r, http.StatusMethodNotAllowed, "OperationNotAllowed", "DELETE")
	allow := strings.Split(r.header.Get("Allow"), ", ")
	if !slices.Equal(allow, []string{"GET", "HEAD", "PATCH"}) {
		t.Fatalf("Allow %q", r.header.Get("Allow"))
	}
	expectStatus(t, f.call(t, http.MethodHead, f.systemPath(0), ""), http.StatusOK)
}

func TestODataVersionHeader(t *testing.T) {
	f := newFixture(t)
	with := func(v string) func(*http.Request) {
		return func(r *http.Request) {
			r.SetBasicAuth(testUser, testPassword)
			r.Header.Set("OData-Version", v)
		}
	}
	expectStatus(t, f.send(t, http.MethodGet, f.systemPath(0), "", with("4.0")), http.StatusOK)
	expectError(t, f.send(t, http.MethodGet, f.systemPath(0), "", with("3.0")), http.StatusPreconditionFailed, "HeaderInvalid", "4.0")
}

func TestPayloadTooLarge(t *testing.T) {
	f := newFixture(t)
	body := `{"ResetType":"` + strings.Repeat("x", 100<<10) + `"}`
	expectError(t, f.call(t, http.MethodPost, f.systemPath(0)+"/Actions/ComputerSystem.Reset", body), http.StatusRequestEntityTooLarge, "PayloadTooLarge")
}
