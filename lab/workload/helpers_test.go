package workload

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/paritylab/paritylab/lab/state"
)

// TestMain silences controller-runtime's global logger, which envtest's CRD
// installer logs through.
func TestMain(m *testing.M) {
	ctrllog.SetLogger(logr.New(ctrllog.NullLogSink{}))
	os.Exit(m.Run())
}

// recorder is a Tracker that remembers what is currently tracked.
type recorder struct {
	mu   sync.Mutex
	live map[string]state.Resource
}

func newRecorder() *recorder { return &recorder{live: map[string]state.Resource{}} }

func (r *recorder) Track(res state.Resource) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.live[res.String()] = res
	return nil
}

func (r *recorder) Forget(res state.Resource) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.live, res.String())
	return nil
}

func (r *recorder) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.live)
}

// startCluster starts a workload cluster for one test and stops it after.
// KEEP_LOGS=<dir> keeps the component logs there.
func startCluster(t testing.TB, opts Options) *Cluster {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	if opts.Dir == "" {
		opts.Dir = filepath.Join(t.TempDir(), "spoke")
	}
	if d := os.Getenv("KEEP_LOGS"); d != "" && opts.LogDir == "" {
		opts.LogDir = filepath.Join(d, filepath.Base(t.Name()))
	}
	c, err := Start(ctx, opts)
	if err != nil {
		t.Fatalf("start workload cluster: %v", err)
	}
	t.Cleanup(func() {
		if err := c.Stop(); err != nil {
			t.Errorf("stop workload cluster: %v", err)
		}
	})
	return c
}

func newClient(t testing.TB, cfg *rest.Config) client.Client {
	t.Helper()
	s, err := Scheme()
	if err != nil {
		t.Fatal(err)
	}
	cl, err := client.New(cfg, client.Options{Scheme: s})
	if err != nil {
		t.Fatal(err)
	}
	return cl
}

// eventually polls cond until it returns true, failing the test after
// timeout with the last error cond gave.
func eventually(t testing.TB, timeout time.Duration, what string, cond func(ctx context.Context) (bool, error)) {
	t.Helper()
	var last error
	err := wait.PollUntilContextTimeout(context.Background(), 200*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		ok, err := cond(ctx)
		last = err
		return ok, nil
	})
	if err != nil {
		t.Fatalf("timed out after %s waiting for %s (last error: %v)", timeout, what, last)
	}
}
