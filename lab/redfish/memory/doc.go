// Package memory is a redfish.Backend whose systems exist only in memory:
// power, boot override and virtual media behave as on a BMC, nothing
// boots. It serves scale runs (hundreds of hosts on a laptop) and the
// emulator's own tests, which can also read what a real machine would
// have done (BootHistory, Attached).
//
// It imports only lab/redfish.
package memory
