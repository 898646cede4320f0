package workload

import (
	"context"
	"path/filepath"
	"testing"
	"time"
)

// BenchmarkStart measures a workload cluster's start-up: control plane with
// kube-controller-manager, CRDs, singletons and the cluster-version
// operator. Stop is not timed. Run with -benchtime=3x or so: one iteration
// takes seconds.
func BenchmarkStart(b *testing.B) {
	for b.Loop() {
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		c, err := Start(ctx, Options{Name: "bench", Dir: filepath.Join(b.TempDir(), "spoke")})
		cancel()
		if err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		if err := c.Stop(); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
	}
}
