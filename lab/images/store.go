package images

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// formatVersion changes whenever the way images are laid out changes, so
// cached images of an older layout are never reused.
const formatVersion = "paritylab-images/v1"

// Host programs and files images are made from (Debian packages).
var (
	busyboxPath  = "/bin/busybox"                               // busybox-static
	isolinuxBin  = "/usr/lib/ISOLINUX/isolinux.bin"             // isolinux
	ldlinuxC32   = "/usr/lib/syslinux/modules/bios/ldlinux.c32" // syslinux-common
	isohybridMBR = "/usr/lib/ISOLINUX/isohdpfx.bin"             // isolinux
)

// File is a file to put into an image.
type File struct {
	// Path is where it goes, absolute within the image.
	Path string `json:"path"`
	// Mode is its permission bits. Default 0644.
	Mode uint32 `json:"mode,omitempty"`
	// Content is the file's bytes; when nil, Source is copied.
	Content []byte `json:"-"`
	// Source is a host file to copy.
	Source string `json:"-"`
}

// Store builds images into <cache>/images, each named by its content hash.
type Store struct {
	dir    string
	kernel Kernel
	// busyboxSum is part of every initramfs hash: a busybox upgrade
	// rebuilds the images.
	busyboxSum string
}

// StoreOptions configure Open. The zero value uses the default cache.
type StoreOptions struct {
	// CacheDir is the paritylab cache. Default CacheDir().
	CacheDir string
}

// Open finds the guest kernel and the host tools, and prepares the cache.
func Open(opts StoreOptions) (*Store, error) {
	if opts.CacheDir == "" {
		d, err := CacheDir()
		if err != nil {
			return nil, err
		}
		opts.CacheDir = d
	}
	kernel, err := FindKernel(opts.CacheDir)
	if err != nil {
		return nil, err
	}
	sum, err := fileSum(busyboxPath)
	if err != nil {
		return nil, fmt.Errorf("busybox (package busybox-static; run `make deps`): %w", err)
	}
	dir := filepath.Join(opts.CacheDir, "images")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("create image cache: %w", err)
	}
	return &Store{dir: dir, kernel: kernel, busyboxSum: sum}, nil
}

// Kernel is the guest kernel images boot.
func (s *Store) Kernel() Kernel { return s.kernel }

// Dir is the image cache directory.
func (s *Store) Dir() string { return s.dir }

// cached returns the path of an image with the given key and extension,
// building it with build (into a temp file renamed into place) if needed.
func (s *Store) cached(key any, ext string, build func(tmp string) error) (string, error) {
	sum, err := hashOf(key)
	if err != nil {
		return "", err
	}
	path := filepath.Join(s.dir, sum+ext)
	if _, err := os.Stat(path); err == nil {
		return path, nil
	}
	tmp := fmt.Sprintf("%s.partial.%d", path, os.Getpid())
	defer os.RemoveAll(tmp)
	if err := build(tmp); err != nil {
		return "", err
	}
	// World-readable: QEMU runs as another user and reads images directly.
	if err := os.Chmod(tmp, 0o644); err != nil {
		return "", fmt.Errorf("chmod image: %w", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return "", fmt.Errorf("store image: %w", err)
	}
	return path, nil
}

func hashOf(key any) (string, error) {
	raw, err := json.Marshal(key)
	if err != nil {
		return "", fmt.Errorf("hash image inputs: %w", err)
	}
	sum := sha256.Sum256(append([]byte(formatVersion+"\n"), raw...))
	return hex.EncodeToString(sum[:16]), nil
}

func fileSum(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", fmt.Errorf("hash %s: %w", path, err)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// content returns a file's bytes.
func (f File) content() ([]byte, error) {
	if f.Content != nil || f.Source == "" {
		return f.Content, nil
	}
	b, err := os.ReadFile(f.Source)
	if err != nil {
		return nil, fmt.Errorf("read %s for %s: %w", f.Source, f.Path, err)
	}
	return b, nil
}

// fileKey identifies a file by path, mode and content hash.
type fileKey struct {
	Path string `json:"path"`
	Mode uint32 `json:"mode"`
	Sum  string `json:"sum"`
}

func keysOf(files []File) ([]fileKey, error) {
	out := make([]fileKey, 0, len(files))
	for _, f := range files {
		b, err := f.content()
		if err != nil {
			return nil, err
		}
		sum := sha256.Sum256(b)
		out = append(out, fileKey{Path: f.Path, Mode: f.mode(), Sum: hex.EncodeToString(sum[:])})
	}
	return out, nil
}

func (f File) mode() uint32 {
	if f.Mode == 0 {
		return 0o644
	}
	return f.Mode
}
