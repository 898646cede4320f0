package registry_test

import (
	"context"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/remote/transport"

	"github.com/paritylab/paritylab/lab/registry"
	"github.com/paritylab/paritylab/lab/state"
)

// startWithLedger starts a registry recorded in a ledger of its own, as the
// lab records it; the test's cleanup reaps whatever a failed test left.
func startWithLedger(t *testing.T) (*registry.Registry, *state.Ledger, string) {
	t.Helper()
	tmp := t.TempDir()
	ledger, err := state.Create(filepath.Join(tmp, "ledger.json"), "registry-test")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := ledger.Reap(context.Background()); err != nil {
			t.Errorf("reap: %v", err)
		}
	})
	dir := filepath.Join(tmp, "registry")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	r, err := registry.Start(ctx, registry.Options{Dir: dir, LogDir: filepath.Join(tmp, "logs"), Tracker: ledger})
	if err != nil {
		t.Fatal(err)
	}
	return r, ledger, dir
}

func TestRegistryServesImagesByDigestAndTag(t *testing.T) {
	r, ledger, dir := startWithLedger(t)
	defer func() {
		if err := r.Stop(); err != nil {
			t.Error(err)
		}
	}()
	if !strings.HasPrefix(r.Host(), "127.0.0.1:") {
		t.Errorf("registry host %s, want one on 127.0.0.1", r.Host())
	}
	kinds := map[string]int{}
	for _, res := range ledger.Record().Resources {
		kinds[res.Kind]++
	}
	if kinds[state.KindProcess] != 1 || kinds[state.KindDir] != 1 {
		t.Errorf("ledger holds %v, want the registry process and its directory", ledger.Record().Resources)
	}

	img, err := random.Image(512, 2)
	if err != nil {
		t.Fatal(err)
	}
	digest, err := img.Digest()
	if err != nil {
		t.Fatal(err)
	}
	repo, err := name.NewRepository(r.Host() + "/ocp/release")
	if err != nil {
		t.Fatal(err)
	}
	if err := remote.Write(repo.Digest(digest.String()), img); err != nil {
		t.Fatalf("push by digest: %v", err)
	}
	if err := remote.Tag(repo.Tag("4.21.0-x86_64"), img); err != nil {
		t.Fatalf("tag: %v", err)
	}
	got, err := remote.Head(repo.Tag("4.21.0-x86_64"))
	if err != nil {
		t.Fatalf("head by tag: %v", err)
	}
	if got.Digest != digest {
		t.Errorf("tag resolves to %s, pushed %s", got.Digest, digest)
	}
	if _, err := os.Stat(filepath.Join(dir, "data", "docker", "registry", "v2", "repositories", "ocp", "release")); err != nil {
		t.Errorf("the repository is not in the registry's storage under Dir: %v", err)
	}

	// The registry runs the configuration Start wrote: loopback only,
	// its own HTTP secret.
	log, err := os.ReadFile(filepath.Join(filepath.Dir(dir), "logs", "registry.log"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(log), "listening on "+r.Host()) || strings.Contains(string(log), "No HTTP secret") {
		t.Errorf("registry.log does not show the lab's configuration (listening on %s, an HTTP secret):\n%s", r.Host(), log)
	}

	// A tag the registry does not have fails as a registry answers it.
	_, err = remote.Head(repo.Tag("4.99.0-x86_64"))
	var terr *transport.Error
	if !errors.As(err, &terr) || terr.StatusCode != 404 {
		t.Errorf("head of a missing tag: %v, want a 404 from the registry", err)
	}
}

// assertGone checks that nothing of the registry is left: its process,
// its port and its directory.
func assertGone(t *testing.T, host, dir string, pid func() bool) {
	t.Helper()
	if pid() {
		t.Error("the registry process still runs")
	}
	// A registry that still answers there. Not any listener: the port is
	// free again, and other packages' tests, run in parallel, may have
	// bound it since (seen once in CI).
	hc := &http.Client{Timeout: time.Second}
	if resp, err := hc.Get("http://" + host + "/v2/"); err == nil {
		resp.Body.Close()
		if v := resp.Header.Get("Docker-Distribution-Api-Version"); v != "" {
			t.Errorf("a registry still answers on %s (%s)", host, v)
		}
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("%s is left (stat: %v)", dir, err)
	}
}

func TestStopLeavesNothing(t *testing.T) {
	r, ledger, dir := startWithLedger(t)
	id := r.Identity()
	if err := r.Stop(); err != nil {
		t.Fatal(err)
	}
	assertGone(t, r.Host(), dir, id.Alive)
	if res := ledger.Record().Resources; len(res) != 0 {
		t.Errorf("ledger still holds %v after Stop", res)
	}
	if err := r.Stop(); err != nil {
		t.Errorf("second Stop: %v", err)
	}
}

// TestLabDownReapsAnInterruptedRegistry: a run that never stopped its
// registry (it was interrupted) leaves a ledger; reaping it, as `paritylab
// lab down` does, ends the process and removes its data.
func TestLabDownReapsAnInterruptedRegistry(t *testing.T) {
	r, ledger, dir := startWithLedger(t)
	id := r.Identity()
	if err := ledger.Reap(context.Background()); err != nil {
		t.Fatal(err)
	}
	assertGone(t, r.Host(), dir, id.Alive)
}

func TestStartWithoutTheBinarySaysWhatToInstall(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	tmp := t.TempDir()
	_, err := registry.Start(context.Background(), registry.Options{Dir: filepath.Join(tmp, "r"), LogDir: tmp})
	if err == nil || !strings.Contains(err.Error(), "docker-registry") || !strings.Contains(err.Error(), "make deps") {
		t.Fatalf("Start without docker-registry: %v, want an error naming the package and make deps", err)
	}
}

func TestStartFailureLeavesNothing(t *testing.T) {
	tmp := t.TempDir()
	ledger, err := state.Create(filepath.Join(tmp, "ledger.json"), "registry-test")
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(tmp, "r")
	// A binary that exits at once: the registry never answers.
	_, err = registry.Start(context.Background(), registry.Options{Dir: dir, LogDir: tmp, Path: "/bin/false", Tracker: ledger, ReadyTimeout: 5 * time.Second})
	if err == nil {
		t.Fatal("Start with a registry that exits: no error")
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("%s is left after a failed Start", dir)
	}
	if res := ledger.Record().Resources; len(res) != 0 {
		t.Errorf("ledger holds %v after a failed Start", res)
	}
}
