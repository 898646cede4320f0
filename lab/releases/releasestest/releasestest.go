// Package releasestest serves the lab's releases from Debian's registry
// for tests: a registry of the test's own, stopped when the test ends.
package releasestest

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/paritylab/paritylab/lab/registry"
	"github.com/paritylab/paritylab/lab/releases"
)

// Serve starts a registry, pushes rels into <host>/openshift/release and
// returns that repository and what was pushed.
func Serve(t testing.TB, rels []releases.Release) (string, []releases.Pushed) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	tmp := t.TempDir()
	reg, err := registry.Start(ctx, registry.Options{Dir: filepath.Join(tmp, "registry"), LogDir: tmp})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := reg.Stop(); err != nil {
			t.Error(err)
		}
	})
	repo := reg.Host() + "/openshift/release"
	pushed, err := releases.Push(ctx, releases.PushInput{Repository: repo, Releases: rels})
	if err != nil {
		t.Fatal(err)
	}
	if len(pushed) != len(rels) {
		t.Fatalf("pushed %d releases, want %d", len(pushed), len(rels))
	}
	return repo, pushed
}
