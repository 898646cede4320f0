package local

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"k8s.io/client-go/kubernetes"

	"github.com/paritylab/paritylab/lab/ports"
)

func TestLocalHub(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "hub")
	h := New(Options{Dir: dir})
	if h.RESTConfig() != nil {
		t.Fatal("RESTConfig before Create must be nil")
	}
	if _, err := h.Kubeconfig(); err == nil {
		t.Fatal("Kubeconfig before Create must fail")
	}
	if err := h.Create(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = h.Dispose(ctx) })
	if h.Backend() != BackendName || h.WebhookHost() != ports.Loopback {
		t.Fatalf("backend %q webhook host %q", h.Backend(), h.WebhookHost())
	}
	if err := h.Create(ctx); err == nil {
		t.Fatal("second Create must fail")
	}
	cs, err := kubernetes.NewForConfig(h.RESTConfig())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cs.Discovery().ServerVersion(); err != nil {
		t.Fatal(err)
	}
	if raw, err := h.Kubeconfig(); err != nil || len(raw) == 0 {
		t.Fatalf("kubeconfig: %v", err)
	}
	if err := h.Dispose(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Fatalf("hub dir left after Dispose: %v", err)
	}
	if err := h.Dispose(ctx); err != nil {
		t.Fatalf("second Dispose: %v", err)
	}
}
