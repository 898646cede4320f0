package binaries

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// Versions of the control-plane programs. They must match the modules in
// lab/binaries/modules; a test checks that they do.
const (
	KubernetesVersion = "v1.34.4"
	EtcdVersion       = "v3.6.4"
)

// CAPM3Module is the metal3 Cluster API infrastructure provider, whose own
// main package `make deps` builds at CAPM3Version, the version the
// repository's go.mod requires (a test checks that they match).
const (
	CAPM3Module  = "github.com/metal3-io/cluster-api-provider-metal3"
	CAPM3Version = "v1.13.2"
)

// Program names.
const (
	KubeAPIServer         = "kube-apiserver"
	KubeControllerManager = "kube-controller-manager"
	Etcd                  = "etcd"
	CAPM3                 = "capm3"
)

// DirEnv overrides the cache directory.
const DirEnv = "PARITYLAB_BIN_DIR"

// Dir is the binary cache: $PARITYLAB_BIN_DIR, else
// ${XDG_CACHE_HOME:-$HOME/.cache}/paritylab/bin.
func Dir() (string, error) {
	if d := os.Getenv(DirEnv); d != "" {
		return d, nil
	}
	if d := os.Getenv("XDG_CACHE_HOME"); d != "" {
		return filepath.Join(d, "paritylab", "bin"), nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("find binary cache: %w", err)
	}
	return filepath.Join(home, ".cache", "paritylab", "bin"), nil
}

// Version returns the version a program is built at.
func Version(program string) (string, error) {
	switch program {
	case KubeAPIServer, KubeControllerManager:
		return KubernetesVersion, nil
	case Etcd:
		return EtcdVersion, nil
	case CAPM3:
		return CAPM3Version, nil
	}
	return "", fmt.Errorf("unknown lab program %q", program)
}

// Path returns the cached executable of a program, with an error that says
// how to build it when it is missing.
func Path(program string) (string, error) {
	version, err := Version(program)
	if err != nil {
		return "", err
	}
	dir, err := Dir()
	if err != nil {
		return "", err
	}
	path := filepath.Join(dir, program+"-"+version)
	info, err := os.Stat(path)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return "", fmt.Errorf("%s %s is not built (looked for %s): run `make deps`", program, version, path)
	case err != nil:
		return "", fmt.Errorf("stat %s: %w", path, err)
	case info.Mode()&0o111 == 0:
		return "", fmt.Errorf("%s is not executable: run `make deps` again", path)
	}
	return path, nil
}
