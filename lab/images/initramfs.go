package images

import (
	"compress/gzip"
	"fmt"
	"os"
	"path"
	"sort"
	"strings"
)

// InitramfsSpec says what goes into an initramfs besides busybox.
type InitramfsSpec struct {
	// Init is /init, run by the kernel as PID 1 (a /bin/sh script is
	// fine: /bin/sh is busybox). Its first line should run
	// `/bin/busybox --install -s` to get the applets.
	Init string
	// Files are extra files (our binaries, baked-in configuration).
	Files []File
	// Modules are kernel modules to include, by name; their dependencies
	// come along. /etc/paritylab/modules lists their paths in load order
	// (LoadModules loads them).
	Modules []string
}

// LoadModules is a shell snippet for an init script that loads the modules
// of the spec in dependency order.
const LoadModules = `for m in $(cat /etc/paritylab/modules 2>/dev/null); do insmod "$m" 2>/dev/null; done`

type initramfsKey struct {
	Kernel  string    `json:"kernel"`
	Busybox string    `json:"busybox"`
	Init    string    `json:"init"`
	Files   []fileKey `json:"files"`
	Modules []string  `json:"modules"`
}

// Initramfs builds (or finds in the cache) a gzipped cpio initramfs.
func (s *Store) Initramfs(spec InitramfsSpec) (string, error) {
	files, err := keysOf(spec.Files)
	if err != nil {
		return "", err
	}
	key := initramfsKey{Kernel: s.kernel.Version, Busybox: s.busyboxSum, Init: spec.Init, Files: files, Modules: spec.Modules}
	return s.cached(key, ".initrd", func(tmp string) error { return s.writeInitramfs(tmp, spec) })
}

func (s *Store) writeInitramfs(dest string, spec InitramfsSpec) error {
	entries, err := s.initramfsEntries(spec)
	if err != nil {
		return err
	}
	f, err := os.Create(dest)
	if err != nil {
		return fmt.Errorf("create initramfs: %w", err)
	}
	defer f.Close()
	gz, _ := gzip.NewWriterLevel(f, gzip.BestSpeed)
	cw := &cpioWriter{w: gz}
	writeEntries(cw, entries)
	if err := cw.close(); err != nil {
		return fmt.Errorf("write initramfs: %w", err)
	}
	if err := gz.Close(); err != nil {
		return fmt.Errorf("compress initramfs: %w", err)
	}
	return f.Close()
}

// entry is one file or symlink of an initramfs.
type entry struct {
	path    string // without leading slash
	perm    uint32
	content []byte
	link    string
}

func (s *Store) initramfsEntries(spec InitramfsSpec) ([]entry, error) {
	busybox, err := os.ReadFile(busyboxPath)
	if err != nil {
		return nil, fmt.Errorf("read busybox: %w", err)
	}
	entries := []entry{
		{path: "bin/busybox", perm: 0o755, content: busybox},
		{path: "bin/sh", link: "busybox"},
		{path: "init", perm: 0o755, content: []byte(spec.Init)},
	}
	for _, dir := range []string{"dev", "proc", "sys", "run", "tmp", "mnt", "etc", "sbin", "usr/bin", "usr/sbin"} {
		entries = append(entries, entry{path: dir, perm: 0o755 | modeDir})
	}
	mods, err := s.moduleEntries(spec.Modules)
	if err != nil {
		return nil, err
	}
	entries = append(entries, mods...)
	for _, f := range spec.Files {
		b, err := f.content()
		if err != nil {
			return nil, err
		}
		entries = append(entries, entry{path: strings.TrimPrefix(path.Clean(f.Path), "/"), perm: f.mode(), content: b})
	}
	return entries, nil
}

func (s *Store) moduleEntries(names []string) ([]entry, error) {
	if len(names) == 0 {
		return nil, nil
	}
	md, err := readModuleDeps(s.kernel.ModulesDir)
	if err != nil {
		return nil, err
	}
	order, err := md.loadOrder(names)
	if err != nil {
		return nil, fmt.Errorf("kernel %s: %w", s.kernel.Version, err)
	}
	base := "lib/modules/" + s.kernel.Version + "/"
	var out []entry
	var list []string
	for _, rel := range order {
		b, err := os.ReadFile(s.kernel.ModulesDir + "/" + rel)
		if err != nil {
			return nil, fmt.Errorf("read module: %w", err)
		}
		out = append(out, entry{path: base + rel, perm: 0o644, content: b})
		list = append(list, "/"+base+rel)
	}
	out = append(out, entry{path: "etc/paritylab/modules", perm: 0o644, content: []byte(strings.Join(list, "\n") + "\n")})
	return out, nil
}

// writeEntries writes every directory first (sorted, so each parent comes
// before its children: the kernel's unpacker creates no missing parents),
// then files and links in path order, so the archive is the same for the
// same content.
func writeEntries(cw *cpioWriter, entries []entry) {
	paths := make([]string, 0, len(entries))
	dirs := map[string]bool{}
	for _, e := range entries {
		paths = append(paths, e.path)
		if e.perm&modeDir != 0 {
			dirs[e.path] = true
		}
	}
	for _, d := range parents(paths) {
		dirs[d] = true
	}
	sortedDirs := make([]string, 0, len(dirs))
	for d := range dirs {
		sortedDirs = append(sortedDirs, d)
	}
	sort.Strings(sortedDirs)
	for _, d := range sortedDirs {
		cw.dir(d)
	}
	sort.Slice(entries, func(i, j int) bool { return entries[i].path < entries[j].path })
	for _, e := range entries {
		switch {
		case e.perm&modeDir != 0:
		case e.link != "":
			cw.symlink(e.path, e.link)
		default:
			cw.file(e.path, e.perm, e.content)
		}
	}
}
