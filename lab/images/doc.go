// Package images builds what lab guests boot: initramfs archives (busybox
// userland, kernel modules, our own files) and bootable ISOs, from the
// Debian kernel `make deps` unpacks into the cache and from Debian
// packages (busybox-static, isolinux, xorriso). Images are cached by the
// hash of everything that goes into them, so a build runs only when an
// input changed; two processes building the same image at once both end
// with the same complete file.
//
// It must not import anything above lab.
package images
