package lab

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/paritylab/paritylab/lab/process"
	"github.com/paritylab/paritylab/lab/state"
)

type recordingProgress struct {
	mu     sync.Mutex
	events []string
}

func (r *recordingProgress) Started(step string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, "started "+step)
}

func (r *recordingProgress) Finished(step string, _ time.Duration, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, fmt.Sprintf("finished %s: %v", step, err))
}

func TestDownMissingStateDir(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "missing")
	if err := Down(context.Background(), dir, nil); !errors.Is(err, ErrNoLab) {
		t.Fatalf("Down on a missing dir = %v, want ErrNoLab", err)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Fatalf("Down created %s (stat: %v)", dir, err)
	}
}

func TestDownWithoutLedgerRemovesStateDir(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "state")
	if err := os.MkdirAll(filepath.Join(dir, "logs"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := Down(context.Background(), dir, nil); err != nil {
		t.Fatalf("Down: %v", err)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Fatalf("state dir still there (stat: %v)", err)
	}
}

// TestDownReapsCrashedRun plays a lab whose owner died: a ledger listing a
// live child process and a directory, and nobody holding the lock.
func TestDownReapsCrashedRun(t *testing.T) {
	tmp := t.TempDir()
	stateDir := filepath.Join(tmp, "state")
	leftover := filepath.Join(tmp, "leftover-dir")
	if err := os.MkdirAll(filepath.Join(leftover, "sub"), 0o700); err != nil {
		t.Fatal(err)
	}

	p, err := process.Start(context.Background(), process.Spec{
		Name:           "sleeper",
		Path:           "/bin/sleep",
		Args:           []string{"300"},
		LogPath:        filepath.Join(tmp, "sleeper.log"),
		KeepWithParent: true,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Stop() })
	id := p.Identity()
	if !id.Alive() {
		t.Fatal("sleeper not alive after Start")
	}

	ledger, err := state.Create(ledgerPath(stateDir), "pl-test01")
	if err != nil {
		t.Fatal(err)
	}
	if err := errors.Join(
		ledger.Track(state.DirResource(leftover)),
		ledger.Track(state.ProcessResource(id)),
	); err != nil {
		t.Fatal(err)
	}

	progress := &recordingProgress{}
	if err := Down(context.Background(), stateDir, progress); err != nil {
		t.Fatalf("Down: %v", err)
	}
	if id.Alive() {
		t.Error("the run's process still runs after Down")
	}
	if _, err := os.Stat(leftover); !os.IsNotExist(err) {
		t.Errorf("the run's directory still exists after Down (stat: %v)", err)
	}
	if _, err := os.Stat(stateDir); !os.IsNotExist(err) {
		t.Errorf("state dir still exists after Down (stat: %v)", err)
	}
	step := "Removing 2 leftover resources of run pl-test01"
	want := []string{"started " + step, "finished " + step + ": <nil>"}
	if strings.Join(progress.events, "|") != strings.Join(want, "|") {
		t.Errorf("progress = %q, want %q", progress.events, want)
	}

	// A second Down finds nothing.
	if err := Down(context.Background(), stateDir, nil); !errors.Is(err, ErrNoLab) {
		t.Errorf("second Down = %v, want ErrNoLab", err)
	}
}

func TestDownKeepsStateWhenReapFails(t *testing.T) {
	stateDir := filepath.Join(t.TempDir(), "state")
	ledger, err := state.Create(ledgerPath(stateDir), "pl-test02")
	if err != nil {
		t.Fatal(err)
	}
	if err := ledger.Track(state.Resource{Kind: "no-such-kind", ID: "x"}); err != nil {
		t.Fatal(err)
	}
	err = Down(context.Background(), stateDir, nil)
	if err == nil || !strings.Contains(err.Error(), "no reaper") {
		t.Fatalf("Down = %v, want a reap error", err)
	}
	// What could not be removed stays recorded for the next attempt.
	again, err := state.Open(ledgerPath(stateDir))
	if err != nil {
		t.Fatalf("ledger gone after a failed Down: %v", err)
	}
	if n := len(again.Record().Resources); n != 1 {
		t.Fatalf("ledger lists %d resources, want 1", n)
	}
}

func TestReadStatusNoLab(t *testing.T) {
	for _, dir := range []string{t.TempDir(), filepath.Join(t.TempDir(), "missing")} {
		if st, err := ReadStatus(context.Background(), dir); !errors.Is(err, ErrNoLab) {
			t.Errorf("ReadStatus(%s) = %+v, %v; want ErrNoLab", dir, st, err)
		}
	}
}

func TestReadStatus(t *testing.T) {
	stateDir := t.TempDir()
	ledger, err := state.Create(ledgerPath(stateDir), "pl-test03")
	if err != nil {
		t.Fatal(err)
	}
	owner, err := process.IdentityOf("paritylab", os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if err := errors.Join(
		ledger.SetValue(valueProfile, ProfileLocal),
		ledger.SetValue(valueOwner, encodeIdentity(owner)),
		ledger.SetValue(valueLogDir, "/logs"),
		ledger.SetValue(valueServer, "https://127.0.0.1:1"),
		ledger.SetValue(valueReady, "2025-01-01T00:00:00Z"),
		ledger.Track(state.DirResource("/x")),
	); err != nil {
		t.Fatal(err)
	}
	st, err := ReadStatus(context.Background(), stateDir)
	if err != nil {
		t.Fatalf("ReadStatus: %v", err)
	}
	if st.RunID != "pl-test03" || st.Profile != ProfileLocal || !st.Ready || st.LogDir != "/logs" ||
		st.HubServer != "https://127.0.0.1:1" || st.StateDir != stateDir || len(st.Resources) != 1 {
		t.Errorf("ReadStatus = %+v", st)
	}
	if !st.OwnerAlive || st.Owner != owner.String() {
		t.Errorf("owner = %q alive=%v, want %q alive", st.Owner, st.OwnerAlive, owner)
	}
	if st.HubHealth != "not started" {
		t.Errorf("HubHealth = %q, want 'not started' without a kubeconfig", st.HubHealth)
	}
}

func TestProbeHub(t *testing.T) {
	ready := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/readyz" {
			http.NotFound(w, r)
			return
		}
		fmt.Fprint(w, "ok")
	}))
	defer ready.Close()
	failing := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, "[-]etcd failed", http.StatusInternalServerError)
	}))
	defer failing.Close()

	dir := t.TempDir()
	kubeconfig := func(name, server string) string {
		path := filepath.Join(dir, name)
		content := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: hub
  cluster:
    server: %s
    insecure-skip-tls-verify: true
contexts:
- name: hub
  context:
    cluster: hub
    user: admin
current-context: hub
users:
- name: admin
  user:
    token: test
`, server)
		if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	cases := []struct {
		name       string
		kubeconfig string
		want       string
	}{
		{"none", "", "not started"},
		{"ready", kubeconfig("ready", ready.URL), "ok"},
		{"failing", kubeconfig("failing", failing.URL), "500 Internal Server Error: [-]etcd failed"},
		{"missing file", filepath.Join(dir, "missing"), "unreadable kubeconfig"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := probeHub(context.Background(), c.kubeconfig); !strings.HasPrefix(got, c.want) {
				t.Errorf("probeHub = %q, want prefix %q", got, c.want)
			}
		})
	}
}
