package binaries

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/mod/modfile"
)

// The versions here name the cache files `make deps` builds from the modules
// in lab/binaries/modules; if they drift, the lab looks for binaries that are
// never built.
func TestVersionsMatchBuildModules(t *testing.T) {
	cases := []struct {
		modFile, module, want string
	}{
		{"modules/kube/go.mod", "k8s.io/kubernetes", KubernetesVersion},
		{"modules/etcd/go.mod", "go.etcd.io/etcd/server/v3", EtcdVersion},
		{"../../go.mod", CAPM3Module, CAPM3Version},
	}
	for _, c := range cases {
		raw, err := os.ReadFile(c.modFile)
		if err != nil {
			t.Fatal(err)
		}
		mf, err := modfile.Parse(c.modFile, raw, nil)
		if err != nil {
			t.Fatal(err)
		}
		got := ""
		for _, r := range mf.Require {
			if r.Mod.Path == c.module {
				got = r.Mod.Version
			}
		}
		if got != c.want {
			t.Errorf("%s requires %s %q, lab/binaries expects %q", c.modFile, c.module, got, c.want)
		}
	}
}

func TestPathExplainsMissingBinary(t *testing.T) {
	t.Setenv(DirEnv, t.TempDir())
	_, err := Path(Etcd)
	if err == nil || !strings.Contains(err.Error(), "make deps") {
		t.Fatalf("want an error telling to run make deps, got %v", err)
	}
}

func TestPathFindsVersionedBinary(t *testing.T) {
	dir := t.TempDir()
	t.Setenv(DirEnv, dir)
	want := filepath.Join(dir, "etcd-"+EtcdVersion)
	if err := os.WriteFile(want, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	got, err := Path(Etcd)
	if err != nil || got != want {
		t.Fatalf("Path(etcd) = %q, %v; want %q", got, err, want)
	}
}

func TestPathRejectsNonExecutable(t *testing.T) {
	dir := t.TempDir()
	t.Setenv(DirEnv, dir)
	if err := os.WriteFile(filepath.Join(dir, "etcd-"+EtcdVersion), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Path(Etcd); err == nil {
		t.Fatal("want an error for a non-executable binary")
	}
}

func TestDirFollowsXDGCacheHome(t *testing.T) {
	t.Setenv(DirEnv, "")
	t.Setenv("XDG_CACHE_HOME", "/x/cache")
	got, err := Dir()
	if err != nil || got != "/x/cache/paritylab/bin" {
		t.Fatalf("Dir() = %q, %v", got, err)
	}
}
