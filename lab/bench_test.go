package lab

import (
	"context"
	"path/filepath"
	"testing"
)

// BenchmarkUp measures `lab up` on the local profile: hub, every CRD, the
// Cluster API controllers with webhooks the API server really calls.
// Teardown is outside the timer.
func BenchmarkUp(b *testing.B) {
	ctx := context.Background()
	for b.Loop() {
		l, err := Up(ctx, Options{StateDir: filepath.Join(b.TempDir(), "lab")})
		if err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		if err := l.Down(ctx); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
	}
}
