package images

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Kernel is an unpacked guest kernel.
type Kernel struct {
	// Version is the kernel release, e.g. 6.1.0-56-amd64.
	Version string
	// Vmlinuz is the kernel image.
	Vmlinuz string
	// ModulesDir is its /lib/modules/<version> tree.
	ModulesDir string
}

// CacheDir is ${PARITYLAB_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/paritylab}.
func CacheDir() (string, error) {
	if d := os.Getenv("PARITYLAB_CACHE_DIR"); d != "" {
		return d, nil
	}
	if d := os.Getenv("XDG_CACHE_HOME"); d != "" {
		return filepath.Join(d, "paritylab"), nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("find cache dir: %w", err)
	}
	return filepath.Join(home, ".cache", "paritylab"), nil
}

// FindKernel returns the guest kernel `make deps` selected
// (<cache>/guest-kernel/current).
func FindKernel(cacheDir string) (Kernel, error) {
	current := filepath.Join(cacheDir, "guest-kernel", "current")
	target, err := os.Readlink(current)
	if err != nil {
		return Kernel{}, fmt.Errorf("no guest kernel in %s: run `make deps`", filepath.Dir(current))
	}
	dir := filepath.Join(filepath.Dir(current), target)
	k := Kernel{Version: filepath.Base(target), Vmlinuz: filepath.Join(dir, "vmlinuz"), ModulesDir: filepath.Join(dir, "modules")}
	for _, p := range []string{k.Vmlinuz, filepath.Join(k.ModulesDir, "modules.dep")} {
		if _, err := os.Stat(p); err != nil {
			return Kernel{}, fmt.Errorf("guest kernel %s is incomplete (%v): run `make deps`", k.Version, err)
		}
	}
	return k, nil
}

// moduleDeps reads modules.dep: module name → relative path and the paths
// of the modules it needs.
type moduleDeps struct {
	paths   map[string]string   // name → path
	deps    map[string][]string // path → dependency paths
	builtin map[string]bool     // names compiled into the kernel
}

func readModuleDeps(modulesDir string) (*moduleDeps, error) {
	f, err := os.Open(filepath.Join(modulesDir, "modules.dep"))
	if err != nil {
		return nil, fmt.Errorf("read modules.dep: %w", err)
	}
	defer f.Close()
	md := &moduleDeps{paths: map[string]string{}, deps: map[string][]string{}, builtin: map[string]bool{}}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		path, rest, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		md.paths[moduleName(path)] = path
		md.deps[path] = strings.Fields(rest)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read modules.dep: %w", err)
	}
	return md, md.readBuiltin(modulesDir)
}

func (md *moduleDeps) readBuiltin(modulesDir string) error {
	raw, err := os.ReadFile(filepath.Join(modulesDir, "modules.builtin"))
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("read modules.builtin: %w", err)
	}
	for _, line := range strings.Fields(string(raw)) {
		md.builtin[moduleName(line)] = true
	}
	return nil
}

// moduleName turns kernel/drivers/net/virtio_net.ko(.xz) into virtio_net.
func moduleName(path string) string {
	base := filepath.Base(path)
	base = base[:strings.Index(base, ".ko")]
	return strings.ReplaceAll(base, "-", "_")
}

// loadOrder returns the module paths to load for the named modules,
// dependencies first, each once.
func (md *moduleDeps) loadOrder(names []string) ([]string, error) {
	var order []string
	seen := map[string]bool{}
	var visit func(path string)
	visit = func(path string) {
		if seen[path] {
			return
		}
		seen[path] = true
		// modules.dep lists dependencies so that the last must load first.
		deps := md.deps[path]
		for i := len(deps) - 1; i >= 0; i-- {
			visit(deps[i])
		}
		order = append(order, path)
	}
	var missing []string
	for _, n := range names {
		name := strings.ReplaceAll(n, "-", "_")
		path, ok := md.paths[name]
		if !ok {
			if !md.builtin[name] {
				missing = append(missing, n)
			}
			continue
		}
		visit(path)
	}
	if len(missing) > 0 {
		return nil, errors.New("kernel has no module named " + strings.Join(missing, ", "))
	}
	return order, nil
}
