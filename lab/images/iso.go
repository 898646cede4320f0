package images

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// ISOSpec describes a bootable hybrid image: the guest kernel with an
// initramfs, booted by isolinux on BIOS machines and by GRUB on UEFI ones,
// from a CD-ROM or written to a disk (an isohybrid MBR, and a GPT with an
// EFI system partition).
type ISOSpec struct {
	// Label is the ISO 9660 volume ID (at most 32 characters); GRUB finds
	// the image by it, so two images a host may hold at once need
	// different labels.
	Label string
	// Initramfs is what the kernel boots into.
	Initramfs InitramfsSpec
	// Cmdline is the kernel command line; the console goes to the first
	// serial port, which the lab logs.
	Cmdline string
	// Files are extra files on the ISO itself.
	Files []File
}

type isoKey struct {
	Label     string    `json:"label"`
	Initramfs string    `json:"initramfs"`
	Cmdline   string    `json:"cmdline"`
	Files     []fileKey `json:"files"`
	Isolinux  string    `json:"isolinux"`
	GRUB      []string  `json:"grub"`
}

// ISO builds (or finds in the cache) a bootable ISO.
func (s *Store) ISO(spec ISOSpec) (string, error) {
	if spec.Label == "" || len(spec.Label) > 32 {
		return "", fmt.Errorf("ISO label %q must have 1 to 32 characters", spec.Label)
	}
	initrd, err := s.Initramfs(spec.Initramfs)
	if err != nil {
		return "", err
	}
	files, err := keysOf(spec.Files)
	if err != nil {
		return "", err
	}
	isolinux, err := fileSum(isolinuxBin)
	if err != nil {
		return "", fmt.Errorf("isolinux (package isolinux; run `make deps`): %w", err)
	}
	key := isoKey{Label: spec.Label, Initramfs: filepath.Base(initrd), Cmdline: spec.Cmdline, Files: files, Isolinux: isolinux, GRUB: grubModules}
	return s.cached(key, ".iso", func(tmp string) error { return s.writeISO(tmp, spec, initrd) })
}

func (s *Store) writeISO(dest string, spec ISOSpec, initrd string) error {
	tree, err := os.MkdirTemp(s.dir, "iso-tree-")
	if err != nil {
		return fmt.Errorf("create ISO tree: %w", err)
	}
	defer os.RemoveAll(tree)
	if err := s.layoutISO(tree, spec, initrd); err != nil {
		return err
	}
	esp := filepath.Join(filepath.Dir(tree), filepath.Base(tree)+".esp")
	defer os.Remove(esp)
	if err := writeESP(esp, spec.Label, spec.Cmdline); err != nil {
		return err
	}
	var out bytes.Buffer
	cmd := exec.Command("xorriso", "-as", "mkisofs", "-quiet",
		"-o", dest, "-V", spec.Label, "-J", "-R",
		// BIOS: isolinux from a CD, and through the hybrid MBR from a disk.
		"-isohybrid-mbr", isohybridMBR,
		"-b", "isolinux/isolinux.bin", "-c", "isolinux/boot.cat",
		"-no-emul-boot", "-boot-load-size", "4", "-boot-info-table",
		// UEFI: the ESP as an appended GPT partition, also the El Torito
		// EFI boot image of the CD.
		"-eltorito-alt-boot", "-e", "--interval:appended_partition_2:all::", "-no-emul-boot",
		"-append_partition", "2", "0xef", esp, "-isohybrid-gpt-basdat",
		tree)
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("xorriso (package xorriso; run `make deps`): %w: %s", err, strings.TrimSpace(out.String()))
	}
	return nil
}

func (s *Store) layoutISO(tree string, spec ISOSpec, initrd string) error {
	copies := map[string]string{
		"isolinux/isolinux.bin": isolinuxBin,
		"isolinux/ldlinux.c32":  ldlinuxC32,
		"vmlinuz":               s.kernel.Vmlinuz,
		"initrd.img":            initrd,
	}
	for dst, src := range copies {
		if err := copyFile(src, filepath.Join(tree, dst)); err != nil {
			return err
		}
	}
	cfg := fmt.Sprintf("DEFAULT lab\nPROMPT 0\nTIMEOUT 0\nLABEL lab\n  KERNEL /vmlinuz\n  APPEND initrd=/initrd.img %s\n", spec.Cmdline)
	if err := os.WriteFile(filepath.Join(tree, "isolinux", "isolinux.cfg"), []byte(cfg), 0o644); err != nil {
		return fmt.Errorf("write isolinux.cfg: %w", err)
	}
	for _, f := range spec.Files {
		b, err := f.content()
		if err != nil {
			return err
		}
		dst := filepath.Join(tree, filepath.Clean("/"+f.Path))
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return fmt.Errorf("create ISO dir: %w", err)
		}
		if err := os.WriteFile(dst, b, os.FileMode(f.mode())); err != nil {
			return fmt.Errorf("write ISO file %s: %w", f.Path, err)
		}
	}
	return nil
}

func copyFile(src, dst string) error {
	b, err := os.ReadFile(src)
	if err != nil {
		return fmt.Errorf("read %s: %w", src, err)
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return fmt.Errorf("create dir for %s: %w", dst, err)
	}
	if err := os.WriteFile(dst, b, 0o644); err != nil {
		return fmt.Errorf("write %s: %w", dst, err)
	}
	return nil
}
