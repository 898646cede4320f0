package images

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// Host programs for the EFI boot path (Debian packages).
var (
	grubMkstandalone = "grub-mkstandalone" // grub-efi-amd64-bin, grub-common
	mkfsVfat         = "mkfs.vfat"         // dosfstools
	mmd              = "mmd"               // mtools
	mcopy            = "mcopy"             // mtools
)

// grubModules are what the embedded GRUB needs: find the image by its
// volume label on an ISO 9660 filesystem (CD or disk), boot Linux, and talk
// over the serial console the lab logs.
var grubModules = []string{"part_gpt", "part_msdos", "iso9660", "fat", "search", "search_label",
	"linux", "normal", "serial", "terminal", "echo", "configfile"}

// grubConfig boots the kernel and initramfs of the image labelled label.
func grubConfig(label, cmdline string) string {
	return fmt.Sprintf(`serial --unit=0 --speed=115200
terminal_input serial
terminal_output serial
set timeout=0
search --no-floppy --set=root --label %s
linux /vmlinuz %s
initrd /initrd.img
boot
`, label, cmdline)
}

// writeESP writes a FAT EFI system partition image holding a standalone
// GRUB as the removable-media boot loader, EFI/BOOT/BOOTX64.EFI.
func writeESP(dest, label, cmdline string) error {
	work, err := os.MkdirTemp(filepath.Dir(dest), "esp-")
	if err != nil {
		return fmt.Errorf("create ESP work dir: %w", err)
	}
	defer os.RemoveAll(work)
	cfg := filepath.Join(work, "grub.cfg")
	if err := os.WriteFile(cfg, []byte(grubConfig(label, cmdline)), 0o644); err != nil {
		return fmt.Errorf("write grub.cfg: %w", err)
	}
	loader := filepath.Join(work, "BOOTX64.EFI")
	if err := run(grubMkstandalone, "-O", "x86_64-efi", "-o", loader,
		"--install-modules="+strings.Join(grubModules, " "), "--modules="+strings.Join(grubModules, " "),
		"--fonts=", "--locales=", "--themes=", "boot/grub/grub.cfg="+cfg); err != nil {
		return err
	}
	info, err := os.Stat(loader)
	if err != nil {
		return fmt.Errorf("stat EFI loader: %w", err)
	}
	// The FAT image: the loader plus room for FAT metadata.
	sizeKiB := info.Size()/1024 + 1024
	if err := run(mkfsVfat, "-C", "-n", "EFIBOOT", dest, fmt.Sprint(sizeKiB)); err != nil {
		return err
	}
	if err := run(mmd, "-i", dest, "::/EFI", "::/EFI/BOOT"); err != nil {
		return err
	}
	return run(mcopy, "-i", dest, loader, "::/EFI/BOOT/BOOTX64.EFI")
}

func run(name string, args ...string) error {
	var out bytes.Buffer
	cmd := exec.Command(name, args...)
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%s (run `make deps`): %w: %s", name, err, strings.TrimSpace(out.String()))
	}
	return nil
}
