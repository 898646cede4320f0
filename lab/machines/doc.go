// Package machines defines, starts, stops and removes the lab's hosts: libvirt
// domains that behave like bare-metal servers (a disk in a lab-owned storage
// pool, an empty SATA CD-ROM for virtual media, a user-mode virtio NIC with a
// stable MAC, the serial console logged to a file, BIOS or UEFI firmware),
// under KVM when a timed probe boot succeeds and TCG otherwise.
//
// Domains are built with libvirtxml, never from XML text. Every domain and
// pool carries the run ID in its name and (domains) in paritylab metadata,
// and is recorded in the run's ledger before it is used, so teardown — also
// from another process after a crash — removes exactly what a run made.
//
// It must not import anything above lab.
package machines
