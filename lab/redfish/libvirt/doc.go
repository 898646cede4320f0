// Package libvirt is the Redfish emulator's backend for real lab hosts:
// each system is a libvirt domain of one lab run. Power actions start,
// stop, reboot or reset the domain; the boot override sets per-device boot
// order and firmware; virtual media is the domain's read-only CD-ROM. The
// architecture is the definition's <os><type arch>, and each <disk
// device='disk'> is reported with its storage volume's capacity (or, for a
// disk outside any pool, the domain's block info).
//
// A BMC's "boot once" holds for exactly one boot, also when the guest
// reboots itself. QEMU keeps a domain's running hardware across a guest
// reboot, so the backend watches reboot events and, when the boot settings
// changed since the domain started, restarts it cold, as a real server
// re-reads the BMC's settings on every boot.
//
// A server does not turn off because its emulator died: when a domain's
// QEMU crashes (QEMU 7.2's TCG segfaults now and then), the backend starts
// the domain again, at most three times per domain, and logs it. A guest
// that powers itself off stays off.
//
// It must not import anything above lab.
package libvirt
