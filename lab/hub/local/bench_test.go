package local

import (
	"context"
	"path/filepath"
	"testing"
)

// BenchmarkCreate measures local hub start-up: etcd, kube-apiserver and
// kube-controller-manager started and healthy, then torn down (teardown is
// outside the timer).
func BenchmarkCreate(b *testing.B) {
	ctx := context.Background()
	for i := 0; b.Loop(); i++ {
		h := New(Options{Dir: filepath.Join(b.TempDir(), "hub")})
		if err := h.Create(ctx); err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		if err := h.Dispose(ctx); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
	}
}
