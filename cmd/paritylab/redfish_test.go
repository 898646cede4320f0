package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"

	"github.com/paritylab/paritylab/lab/redfish/redfishtest"
)

// waitForFile polls for a file another goroutine writes.
func waitForFile(t *testing.T, path string, errc <-chan error) []byte {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		if raw, err := os.ReadFile(path); err == nil {
			return raw
		}
		select {
		case err := <-errc:
			t.Fatalf("serve ended before writing the port file: %v", err)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("no port file %s", path)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestRedfishServe(t *testing.T) {
	dir := t.TempDir()
	systems := filepath.Join(dir, "systems.json")
	if err := os.WriteFile(systems, []byte(`[{"name":"vm-a","cpus":8}]`), 0o600); err != nil {
		t.Fatal(err)
	}
	f := &redfishFlags{
		listen: "127.0.0.1:0", backend: "memory", portFile: filepath.Join(dir, "port"),
		htpasswd:      redfishtest.WriteHtpasswd(t, map[string]string{"admin": "pw"}),
		memorySystems: systems, memoryCount: 2, memoryPrefix: "gen",
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var out bytes.Buffer
	errc := make(chan error, 1)
	go func() { errc <- serveRedfish(ctx, f, &out, logr.Discard()) }()

	raw := waitForFile(t, f.portFile, errc)
	port, err := strconv.Atoi(strings.TrimSpace(string(raw)))
	if err != nil || port == 0 {
		t.Fatalf("port file %q", raw)
	}
	if st, _ := os.Stat(f.portFile); st.Mode().Perm() != 0o600 {
		t.Fatalf("port file mode %v, want 0600", st.Mode().Perm())
	}
	req, _ := http.NewRequest(http.MethodGet, "http://127.0.0.1:"+strconv.Itoa(port)+"/redfish/v1/Systems", nil)
	req.SetBasicAuth("admin", "pw")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var coll struct {
		Count int `json:"Members@odata.count"`
	}
	err = json.NewDecoder(resp.Body).Decode(&coll)
	resp.Body.Close()
	if err != nil || coll.Count != 3 {
		t.Fatalf("systems collection: %d members (%v), want 1 from the file + 2 generated", coll.Count, err)
	}

	cancel()
	if err := <-errc; err != nil {
		t.Fatalf("serve after cancel: %v", err)
	}
	if _, err := os.Stat(f.portFile); !os.IsNotExist(err) {
		t.Fatalf("port file left behind: %v", err)
	}
	if !strings.Contains(out.String(), "Serving Redfish at http://127.0.0.1:") {
		t.Fatalf("output %q", out.String())
	}
}

func TestRedfishServeRefusesBadFlags(t *testing.T) {
	dir := t.TempDir()
	badJSON := filepath.Join(dir, "bad.json")
	_ = os.WriteFile(badJSON, []byte(`{"name":"not an array"}`), 0o600)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--memory-count", "1"}, "--htpasswd is required"},
		{[]string{"--no-auth", "--memory-count", "1", "--listen", "0.0.0.0:0"}, "not a loopback"},
		{[]string{"--no-auth", "--memory-count", "1", "--backend", "ipmi"}, `unknown --backend "ipmi"; known: libvirt, memory`},
		{[]string{"--no-auth"}, "no systems"},
		{[]string{"--no-auth", "--memory-systems", badJSON}, "parse system specs"},
		{[]string{"--no-auth", "--memory-count", "1", "--tls-cert", "x.pem"}, "go together"},
		{[]string{"--htpasswd", filepath.Join(dir, "missing"), "--memory-count", "1"}, "htpasswd"},
	} {
		out, err := runCLI(t, append([]string{"redfish", "serve"}, c.args...)...)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: error %v (output %q), want one containing %q", c.args, err, out, c.want)
		}
	}
}
