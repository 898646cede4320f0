package images

import "fmt"

// MarkerPrefix starts the line a marker image prints on the serial console.
const MarkerPrefix = "PARITYLAB-MARKER"

// MarkerSpec is an image that boots, prints one marker line with the
// machine's SMBIOS UUID to the serial console and then idles (or powers
// off): proof that a host booted what it was given.
type MarkerSpec struct {
	// Marker is printed after MarkerPrefix.
	Marker string
	// PowerOff powers the guest off after the marker instead of idling.
	PowerOff bool
	// Reboot makes the guest reboot itself after the marker (as an
	// installer does), instead of idling.
	Reboot bool
}

// Line returns the line the image prints before the SMBIOS UUID.
func (m MarkerSpec) Line() string { return MarkerPrefix + " " + m.Marker }

func (m MarkerSpec) init() string {
	end := "while :; do sleep 3600; done"
	switch {
	case m.PowerOff:
		end = "poweroff -f"
	case m.Reboot:
		end = "sleep 1; reboot -f"
	}
	return fmt.Sprintf(`#!/bin/sh
/bin/busybox --install -s
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
echo "%s uuid=$(cat /sys/class/dmi/id/product_uuid 2>/dev/null)" > /dev/ttyS0
%s
`, m.Line(), end)
}

// MarkerISO builds a bootable ISO of a marker image. Its kernel skips the
// crypto self-tests, as the assisted guest images do (see guestCmdline in
// lab/assisted): under TCG they now and then never end.
func (s *Store) MarkerISO(m MarkerSpec) (string, error) {
	return s.ISO(ISOSpec{Label: "PARITYLAB_MARKER", Initramfs: m.Initramfs(), Cmdline: "console=ttyS0 quiet cryptomgr.notests maxcpus=1"})
}

// Initramfs returns the initramfs spec of a marker image, for direct
// kernel boot.
func (m MarkerSpec) Initramfs() InitramfsSpec { return InitramfsSpec{Init: m.init()} }
