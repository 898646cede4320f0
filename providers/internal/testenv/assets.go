package testenv

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"

	"golang.org/x/mod/modfile"
)

// repoRoot is the repository's top directory, found from this file's path.
func repoRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "..")
}

// AssetsDir is where envtest finds kube-apiserver and etcd:
// $KUBEBUILDER_ASSETS, else the directory `make deps` links them into,
// ${PARITYLAB_BIN_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/paritylab/bin}/../kubebuilder-assets/<kubernetes version>,
// the version being the one lab/binaries/modules/kube pins.
func AssetsDir() (string, error) {
	if d := os.Getenv("KUBEBUILDER_ASSETS"); d != "" {
		return d, nil
	}
	bin := os.Getenv("PARITYLAB_BIN_DIR")
	if bin == "" {
		cache := os.Getenv("XDG_CACHE_HOME")
		if cache == "" {
			home, err := os.UserHomeDir()
			if err != nil {
				return "", fmt.Errorf("find envtest binaries: %w", err)
			}
			cache = filepath.Join(home, ".cache")
		}
		bin = filepath.Join(cache, "paritylab", "bin")
	}
	version, err := kubernetesVersion()
	if err != nil {
		return "", err
	}
	dir := filepath.Join(bin, "..", "kubebuilder-assets", version)
	if _, err := os.Stat(filepath.Join(dir, "kube-apiserver")); err != nil {
		return "", fmt.Errorf("find envtest binaries in %s (run `make deps`, or set KUBEBUILDER_ASSETS): %w", filepath.Clean(dir), err)
	}
	return filepath.Clean(dir), nil
}

// kubernetesVersion reads the k8s.io/kubernetes version the lab builds its
// control-plane binaries from.
func kubernetesVersion() (string, error) {
	path := filepath.Join(repoRoot(), "lab", "binaries", "modules", "kube", "go.mod")
	raw, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("read the pinned Kubernetes version: %w", err)
	}
	f, err := modfile.ParseLax(path, raw, nil)
	if err != nil {
		return "", fmt.Errorf("parse %s: %w", path, err)
	}
	for _, r := range f.Require {
		if r.Mod.Path == "k8s.io/kubernetes" {
			return r.Mod.Version, nil
		}
	}
	return "", fmt.Errorf("%s requires no k8s.io/kubernetes", path)
}
