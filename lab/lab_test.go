package lab

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
)

// stepRecorder remembers steps in order.
type stepRecorder struct{ started, failed []string }

func (p *stepRecorder) Started(s string) { p.started = append(p.started, s) }
func (p *stepRecorder) Finished(s string, _ time.Duration, err error) {
	if err != nil {
		p.failed = append(p.failed, s)
	}
}

func TestUpStatusDown(t *testing.T) {
	ctx := context.Background()
	stateDir := filepath.Join(t.TempDir(), "lab")
	progress := &stepRecorder{}
	l, err := Up(ctx, Options{StateDir: stateDir, Progress: progress})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = l.Down(ctx) })
	if len(progress.started) != len(l.steps()) || len(progress.failed) != 0 {
		t.Fatalf("progress started %v, failed %v", progress.started, progress.failed)
	}

	st, err := ReadStatus(ctx, stateDir)
	if err != nil {
		t.Fatal(err)
	}
	if !st.Ready || !st.OwnerAlive || st.HubHealth != "ok" || st.RunID != l.RunID() {
		t.Fatalf("status of a running lab: %+v", st)
	}
	if info, err := os.Stat(l.KubeconfigPath()); err != nil || info.Mode().Perm() != 0o600 {
		t.Fatalf("kubeconfig must be 0600: %v %v", info, err)
	}
	// The lab's client knows CAPI types and reads them from the hub.
	if err := l.Client().List(ctx, &clusterv1.ClusterList{}); err != nil {
		t.Fatalf("list Clusters: %v", err)
	}
	if _, err := Up(ctx, Options{StateDir: stateDir}); err == nil {
		t.Fatal("a second Up on the same state dir must fail while the first runs")
	}

	if err := l.Down(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(stateDir); !os.IsNotExist(err) {
		t.Fatalf("state dir left after Down: %v", err)
	}
	if err := l.Down(ctx); err != nil {
		t.Fatalf("second Down: %v", err)
	}
}

func TestUpCancelledUndoesEverything(t *testing.T) {
	stateDir := filepath.Join(t.TempDir(), "lab")
	ctx, cancel := context.WithCancel(context.Background())
	progress := &cancelAfterHub{cancel: cancel}
	_, err := Up(ctx, Options{StateDir: stateDir, Progress: progress})
	if err == nil {
		t.Fatal("Up must fail when cancelled")
	}
	if _, statErr := os.Stat(stateDir); !os.IsNotExist(statErr) {
		t.Fatalf("a cancelled Up left its state dir: %v (error was %v)", statErr, err)
	}
}

// cancelAfterHub cancels Up as soon as the hub step finished, as a Ctrl-C
// at that moment would.
type cancelAfterHub struct{ cancel context.CancelFunc }

func (c *cancelAfterHub) Started(string) {}
func (c *cancelAfterHub) Finished(step string, _ time.Duration, _ error) {
	if step == "Starting the hub (etcd, kube-apiserver, kube-controller-manager)" {
		c.cancel()
	}
}
