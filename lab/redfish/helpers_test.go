package redfish_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/paritylab/paritylab/lab/redfish"
	"github.com/paritylab/paritylab/lab/redfish/memory"
	"github.com/paritylab/paritylab/lab/redfish/redfishtest"
)

const (
	testUser     = "admin"
	testPassword = "correct horse battery staple"
)

// fixture is a server over a memory backend, called through its handler;
// newFixture's has two systems, node-0 and node-1.
type fixture struct {
	srv      *redfish.Server
	backend  *memory.Backend
	ids      []string
	imageDir string
}

func newFixture(t testing.TB, mutate ...func(*redfish.Options)) *fixture {
	t.Helper()
	return newFixtureOf(t, memory.Generate("node", 2), mutate...)
}

// newFixtureOf is newFixture over the given systems.
func newFixtureOf(t testing.TB, specs []memory.SystemSpec, mutate ...func(*redfish.Options)) *fixture {
	t.Helper()
	backend, err := memory.New(memory.Options{Systems: specs})
	if err != nil {
		t.Fatal(err)
	}
	opts := redfish.Options{
		Backend:      backend,
		HtpasswdPath: redfishtest.WriteHtpasswd(t, map[string]string{testUser: testPassword}),
		ImageDir:     t.TempDir(),
	}
	for _, m := range mutate {
		m(&opts)
	}
	srv, err := redfish.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Shutdown(context.Background()) })
	ids, err := backend.Systems(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return &fixture{srv: srv, backend: backend, ids: ids, imageDir: opts.ImageDir}
}

// response is an answer of the handler, with the body decoded if JSON.
type response struct {
	status int
	header http.Header
	raw    string
	body   map[string]any
}

// call sends a request with the test user's Basic credentials.
func (f *fixture) call(t testing.TB, method, path, body string) response {
	t.Helper()
	return f.send(t, method, path, body, func(r *http.Request) { r.SetBasicAuth(testUser, testPassword) })
}

// send sends a request prepared by prep (credentials, headers).
func (f *fixture) send(t testing.TB, method, path, body string, prep func(*http.Request)) response {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req := httptest.NewRequest(method, path, rd)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if prep != nil {
		prep(req)
	}
	rec := httptest.NewRecorder()
	f.srv.ServeHTTP(rec, req)
	return decode(t, rec.Result())
}

func decode(t testing.TB, resp *http.Response) response {
	t.Helper()
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	out := response{status: resp.StatusCode, header: resp.Header, raw: string(raw)}
	if len(raw) > 0 {
		if err := json.Unmarshal(raw, &out.body); err != nil {
			t.Fatalf("body of HTTP %d is not a JSON object: %v\n%s", resp.StatusCode, err, raw)
		}
	}
	return out
}

func (f *fixture) systemPath(i int) string { return "/redfish/v1/Systems/" + f.ids[i] }

func (f *fixture) system(t testing.TB, i int) *redfish.System {
	t.Helper()
	s, err := f.backend.System(context.Background(), f.ids[i])
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// expectStatus fails unless the response has the status.
func expectStatus(t testing.TB, r response, status int) {
	t.Helper()
	if r.status != status {
		t.Fatalf("HTTP %d, want %d; body %s", r.status, status, r.raw)
	}
}

// expectError checks a Redfish error: status, message ID, a body with
// every required field, and a message mentioning each of mentions.
func expectError(t testing.TB, r response, status int, id string, mentions ...string) {
	t.Helper()
	expectStatus(t, r, status)
	if err := redfishErrorProblem(r.body); err != "" {
		t.Fatalf("%s\nbody: %s", err, r.raw)
	}
	e := r.body["error"].(map[string]any)
	if code := e["code"].(string); code != "Base.1.16."+id {
		t.Fatalf("error code %q, want Base.1.16.%s; body %s", code, id, r.raw)
	}
	for _, m := range mentions {
		if !strings.Contains(e["message"].(string), m) {
			t.Fatalf("error message %q does not mention %q", e["message"], m)
		}
	}
}

// redfishErrorProblem says what is wrong with a Redfish error body, or "".
func redfishErrorProblem(body map[string]any) string {
	e, ok := body["error"].(map[string]any)
	if !ok {
		return "no error object"
	}
	code, _ := e["code"].(string)
	msg, _ := e["message"].(string)
	if !strings.HasPrefix(code, "Base.1.") || msg == "" {
		return "error without a Base code or a message"
	}
	infos, ok := e["@Message.ExtendedInfo"].([]any)
	if !ok || len(infos) == 0 {
		return "no @Message.ExtendedInfo"
	}
	for _, i := range infos {
		info, ok := i.(map[string]any)
		if !ok {
			return "ExtendedInfo entry is not an object"
		}
		for _, k := range []string{"MessageId", "Message", "Severity", "Resolution"} {
			if s, _ := info[k].(string); s == "" {
				return "ExtendedInfo entry without " + k
			}
		}
		if info["MessageId"] != code {
			return "ExtendedInfo MessageId differs from code"
		}
	}
	return ""
}

// get reads a nested value of a decoded body by keys.
func get(body map[string]any, keys ...string) any {
	var cur any = body
	for _, k := range keys {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil
		}
		cur = m[k]
	}
	return cur
}
