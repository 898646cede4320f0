package apiproxy

import (
	"bufio"
	"compress/gzip"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"
)

// hub is an upstream that records what the proxy sent it and answers
// with a handler of the test's.
type hub struct {
	path, accept, body string
}

func proxyTo(t *testing.T, upstream http.HandlerFunc) (*httptest.Server, *hub) {
	t.Helper()
	seen := &hub{}
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, _ := io.ReadAll(r.Body)
		seen.path, seen.accept, seen.body = r.URL.Path, r.Header.Get("Accept"), string(raw)
		upstream(w, r)
	}))
	t.Cleanup(up.Close)
	u, _ := url.Parse(up.URL)
	h, err := NewHandler(Options{Upstream: u, Transport: http.DefaultTransport})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv, seen
}

func jsonAnswer(body string) http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, body)
	}
}

// A read goes to the private group, in JSON, and comes back standard.
func TestProxyGet(t *testing.T) {
	srv, seen := proxyTo(t, jsonAnswer(machinePrivate(t)))
	req, _ := http.NewRequest(http.MethodGet, srv.URL+"/apis/cluster.x-k8s.io/v1beta2/namespaces/ns/machines/m-1", nil)
	req.Header.Set("Accept", "application/vnd.kubernetes.protobuf, application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	if seen.path != "/apis/cluster.hypershift.openshift.io/v1beta2/namespaces/ns/machines/m-1" || seen.accept != "application/json" {
		t.Errorf("the hub was asked %s with Accept %q", seen.path, seen.accept)
	}
	if got := decode(t, raw); lookup(got, "apiVersion") != "cluster.x-k8s.io/v1beta2" ||
		lookup(got, "metadata.ownerReferences.0.apiVersion") != "cluster.x-k8s.io/v1beta2" {
		t.Errorf("the client read %s", raw)
	}
}

// A write's body reaches the hub in the private group; a server-side apply
// in YAML too (as JSON); a body the proxy cannot read is refused.
func TestProxyWrites(t *testing.T) {
	srv, seen := proxyTo(t, jsonAnswer(`{}`))
	for _, ct := range []string{"application/json", "application/merge-patch+json", "application/apply-patch+yaml"} {
		body := machineJSON
		if ct == "application/apply-patch+yaml" {
			body = "apiVersion: cluster.x-k8s.io/v1beta2\nkind: Machine\nmetadata:\n  name: m-1\n"
		}
		req, _ := http.NewRequest(http.MethodPatch, srv.URL+"/apis/cluster.x-k8s.io/v1beta2/namespaces/ns/machines/m-1", strings.NewReader(body))
		req.Header.Set("Content-Type", ct)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_ = resp.Body.Close()
		if resp.StatusCode != http.StatusOK || lookup(decode(t, []byte(seen.body)), "apiVersion") != "cluster.hypershift.openshift.io/v1beta2" {
			t.Errorf("%s: status %d, the hub got %s", ct, resp.StatusCode, seen.body)
		}
	}
	req, _ := http.NewRequest(http.MethodPost, srv.URL+"/apis/cluster.x-k8s.io/v1beta2/namespaces/ns/machines", strings.NewReader("k8s\x00proto"))
	req.Header.Set("Content-Type", "application/vnd.kubernetes.protobuf")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusUnsupportedMediaType || !strings.Contains(string(raw), "send JSON") {
		t.Errorf("a protobuf body: %d %s", resp.StatusCode, raw)
	}
}

// Watch events reach the client one by one as the hub sends them, each
// translated.
func TestProxyWatchStreams(t *testing.T) {
	second := make(chan struct{})
	srv, _ := proxyTo(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"type":"ADDED","object":`+machinePrivate(t)+`}`+"\n")
		w.(http.Flusher).Flush()
		select {
		case <-second:
		case <-r.Context().Done():
			return
		}
		_, _ = io.WriteString(w, `{"type":"BOOKMARK","object":{"kind":"Machine","apiVersion":"cluster.hypershift.openshift.io/v1beta2","metadata":{"resourceVersion":"7"}}}`+"\n")
	})
	// A proxy that held the stream back would not even answer.
	c := &http.Client{Timeout: 20 * time.Second}
	resp, err := c.Get(srv.URL + "/apis/cluster.x-k8s.io/v1beta2/machines?watch=true")
	if err != nil {
		t.Fatalf("watch: %v", err)
	}
	defer resp.Body.Close()
	lines := bufio.NewScanner(resp.Body)
	lines.Buffer(nil, 1<<20)
	first := make(chan bool, 1)
	go func() { first <- lines.Scan() }()
	select {
	case ok := <-first:
		if !ok {
			t.Fatalf("no first event: %v", lines.Err())
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the first event did not come through before the hub sent the next: the proxy holds the stream back")
	}
	if got := decode(t, lines.Bytes()); lookup(got, "type") != "ADDED" || lookup(got, "object.apiVersion") != "cluster.x-k8s.io/v1beta2" {
		t.Errorf("first event %s", lines.Bytes())
	}
	close(second) // the hub sends the second event only now
	if !lines.Scan() {
		t.Fatalf("no second event: %v", lines.Err())
	}
	if got := decode(t, lines.Bytes()); lookup(got, "type") != "BOOKMARK" || lookup(got, "object.apiVersion") != "cluster.x-k8s.io/v1beta2" {
		t.Errorf("second event %s", lines.Bytes())
	}
}

// Other requests pass through, their bodies still scanned: a ConfigMap
// owned by a Machine.
func TestProxyOtherGroups(t *testing.T) {
	cm := `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c","ownerReferences":[{"apiVersion":"cluster.hypershift.openshift.io/v1beta2","kind":"Machine","name":"m-1","uid":"u"}]}}`
	srv, seen := proxyTo(t, jsonAnswer(cm))
	resp, err := http.Get(srv.URL + "/api/v1/namespaces/ns/configmaps/c")
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	if seen.path != "/api/v1/namespaces/ns/configmaps/c" || lookup(decode(t, raw), "metadata.ownerReferences.0.apiVersion") != "cluster.x-k8s.io/v1beta2" {
		t.Errorf("the hub was asked %s; the client read %s", seen.path, raw)
	}
}

// The hub is asked for the client's JSON media ranges only, their
// parameters kept: a metadata-only read must still get metadata.
func TestJSONAccept(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"", "application/json"},
		{"application/vnd.kubernetes.protobuf", "application/json"},
		{"application/vnd.kubernetes.protobuf, application/json", "application/json"},
		{"application/vnd.kubernetes.protobuf;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json",
			"application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1, application/json"},
		{"application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json", "application/json"},
		{"application/cbor", "application/json"},
		{"application/json;as=Table;v=v1;g=meta.k8s.io", "application/json;as=Table;v=v1;g=meta.k8s.io"},
	} {
		if got := jsonAccept(tc.in); got != tc.want {
			t.Errorf("jsonAccept(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// A gzipped answer is inflated before it is translated: the proxy asks
// the hub for gzip on its own behalf, whatever its client asked.
func TestProxyReadsCompressedAnswers(t *testing.T) {
	srv, _ := proxyTo(t, func(w http.ResponseWriter, r *http.Request) {
		if !strings.Contains(r.Header.Get("Accept-Encoding"), "gzip") {
			jsonAnswer(machinePrivate(t))(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Encoding", "gzip")
		zw := gzip.NewWriter(w)
		_, _ = io.WriteString(zw, machinePrivate(t))
		_ = zw.Close()
	})
	req, _ := http.NewRequest(http.MethodGet, srv.URL+"/apis/cluster.x-k8s.io/v1beta2/namespaces/ns/machines/m-1", nil)
	req.Header.Set("Accept-Encoding", "gzip")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Encoding") != "" {
		t.Fatalf("status %d, Content-Encoding %q: %s", resp.StatusCode, resp.Header.Get("Content-Encoding"), raw)
	}
	if got := decode(t, raw); lookup(got, "apiVersion") != "cluster.x-k8s.io/v1beta2" {
		t.Errorf("apiVersion %v after an inflated answer", lookup(got, "apiVersion"))
	}
}
