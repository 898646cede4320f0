package crds

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"

	"golang.org/x/mod/module"
)

// ModuleDir returns the directory of a dependency module in the module
// cache, at the version this binary was built with. If the module is not in
// the cache (a binary copied to another machine), it is downloaded with
// `go mod download`. Test binaries carry no dependency information (or, for
// a main package, only the main package's); for
// them the go command of the enclosing module answers.
func ModuleDir(path string) (string, error) {
	version, err := buildVersion(path)
	if errors.Is(err, errNoBuildDeps) {
		return goCommand("list", "-m", "-json", path)
	}
	if err != nil {
		return "", err
	}
	return ModuleDirAt(path, version)
}

// ModuleDirAt returns the directory of a module at an exact version in the
// module cache, downloading it if needed.
func ModuleDirAt(path, version string) (string, error) {
	dir, err := cacheDir(path, version)
	if err != nil {
		return "", err
	}
	if _, err := os.Stat(dir); err == nil {
		return dir, nil
	}
	return download(path, version)
}

var errNoBuildDeps = errors.New("binary carries no dependency information")

// buildVersion reads the module's version (after replacements) from the
// build information the Go toolchain embeds in every binary.
func buildVersion(path string) (string, error) {
	info, ok := debug.ReadBuildInfo()
	if !ok || len(info.Deps) == 0 {
		return "", errNoBuildDeps
	}
	for _, dep := range info.Deps {
		if dep.Path != path {
			continue
		}
		if dep.Replace != nil {
			return dep.Replace.Version, nil
		}
		return dep.Version, nil
	}
	if testing.Testing() {
		// The test binary of a main package lists the main package's
		// dependencies only, not those its tests import.
		return "", errNoBuildDeps
	}
	return "", fmt.Errorf("find module %s: not a dependency of this binary", path)
}

func cacheDir(path, version string) (string, error) {
	root, err := modCache()
	if err != nil {
		return "", err
	}
	escPath, err := module.EscapePath(path)
	if err != nil {
		return "", fmt.Errorf("escape module path %s: %w", path, err)
	}
	escVersion, err := module.EscapeVersion(version)
	if err != nil {
		return "", fmt.Errorf("escape module version %s: %w", version, err)
	}
	return filepath.Join(root, escPath+"@"+escVersion), nil
}

// modCache follows the go command: $GOMODCACHE, else the first $GOPATH
// entry + /pkg/mod, else $HOME/go/pkg/mod.
func modCache() (string, error) {
	if d := os.Getenv("GOMODCACHE"); d != "" {
		return d, nil
	}
	if gp := os.Getenv("GOPATH"); gp != "" {
		return filepath.Join(filepath.SplitList(gp)[0], "pkg", "mod"), nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("find module cache: %w", err)
	}
	return filepath.Join(home, "go", "pkg", "mod"), nil
}

func download(path, version string) (string, error) {
	return goCommand("mod", "download", "-json", path+"@"+version)
}

// ModuleVersion returns the version (after replacements) of a dependency
// module this binary was built with. Test binaries carry no dependency
// information; for them the go command of the enclosing module answers.
func ModuleVersion(path string) (string, error) {
	version, err := buildVersion(path)
	if !errors.Is(err, errNoBuildDeps) {
		return version, err
	}
	m, err := goModule("list", "-m", "-json", path)
	if err != nil {
		return "", err
	}
	return m.Version, nil
}

// goCommand runs a go subcommand that prints a module as JSON and returns
// the module's directory, downloading it if needed.
func goCommand(args ...string) (string, error) {
	out, err := goModule(args...)
	if err != nil {
		return "", err
	}
	if out.Dir == "" {
		// `go list -m` leaves Dir empty for a module not downloaded yet.
		return download(out.Path, out.Version)
	}
	return out.Dir, nil
}

// goModuleJSON is what `go list -m -json` and `go mod download -json`
// print of a module.
type goModuleJSON struct {
	Path, Version, Dir string
	Error              any
}

func goModule(args ...string) (goModuleJSON, error) {
	var stdout, stderr bytes.Buffer
	cmd := exec.Command("go", args...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	var out goModuleJSON
	if err := cmd.Run(); err != nil {
		return out, fmt.Errorf("go %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	if err := json.Unmarshal(stdout.Bytes(), &out); err != nil {
		return out, fmt.Errorf("parse output of go %s: %w", strings.Join(args, " "), err)
	}
	if out.Error != nil {
		return out, fmt.Errorf("go %s: %v", strings.Join(args, " "), out.Error)
	}
	return out, nil
}
