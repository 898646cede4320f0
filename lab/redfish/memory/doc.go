// Package memory is a redfish.Backend whose systems exist only in memory:
// power, boot override and virtual media behave as on a BMC, nothing
// boots. Processors and disks are what each SystemSpec says (by default
// x86_64 and one 120 GiB disk, as on a lab host). It serves scale runs
// (hundreds of hosts on a laptop) and the emulator's own tests, which can
// also read what a real machine would have done (BootHistory, Attached).
//
// It imports only lab/redfish.
package memory
