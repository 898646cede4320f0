// Package releasestest serves the lab's releases from Debian's registry
// for tests: registries of the test's own, stopped when the test ends.
package releasestest

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/paritylab/paritylab/lab/ports"
	"github.com/paritylab/paritylab/lab/registry"
	"github.com/paritylab/paritylab/lab/releases"
)

// Registry starts a registry named name on a loopback address (empty:
// ports.Loopback), stopped when the test ends.
func Registry(t testing.TB, name, address string) *registry.Registry {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	tmp := t.TempDir()
	reg, err := registry.Start(ctx, registry.Options{Name: name, Address: address, Dir: filepath.Join(tmp, "data"), LogDir: tmp})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := reg.Stop(); err != nil {
			t.Error(err)
		}
	})
	return reg
}

// Requests are the requests a registry answered so far.
func Requests(t testing.TB, reg *registry.Registry) []registry.Request {
	t.Helper()
	got, err := registry.Requests(reg.LogPath())
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// Serve starts a registry, pushes rels into <host>/openshift/release and
// returns that repository and what was pushed.
func Serve(t testing.TB, rels []releases.Release) (string, []releases.Pushed) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	reg := Registry(t, "", "")
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

// Site is a disconnected site: a source registry on ports.Unrouted that
// publishes releases as quay.io does, and its oc-mirror mirror on
// ports.Loopback.
type Site struct {
	Source, Mirror *registry.Registry
	// Published are the releases as the source names them.
	Published []releases.Pushed
	// RegistriesConf names the mirrors (releases.OCMirrorSets).
	RegistriesConf string
}

// DisconnectedSite publishes rels in a new source and mirrors them.
func DisconnectedSite(t testing.TB, rels []releases.Release) *Site {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	site := &Site{Source: Registry(t, "source", ports.Unrouted), Mirror: Registry(t, "mirror", ports.Loopback)}
	var err error
	site.Published, err = releases.Push(ctx, releases.PushInput{
		Repository:          site.Source.Host() + "/" + releases.SourceReleasePath,
		ComponentRepository: site.Source.Host() + "/" + releases.SourceComponentsPath,
		Releases:            rels,
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := releases.Mirror(ctx, releases.MirrorInput{Releases: site.Published, Registry: site.Mirror.Host()}); err != nil {
		t.Fatal(err)
	}
	site.RegistriesConf = releases.RegistriesConf(releases.OCMirrorSets(site.Source.Host(), site.Mirror.Host()))
	return site
}
