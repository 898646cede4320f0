// Package redfish is the lab's BMC emulator: one HTTP server on a loopback
// port that serves many systems the way a Redfish BMC does for Ironic and
// the python sushy library (the contract sushy-tools implements), backed by
// a small Backend interface with two implementations:
//
//   - lab/redfish/libvirt: real libvirt domains (power, boot order,
//     virtual media attached to the domain's CD-ROM);
//   - lab/redfish/memory: systems that exist only in memory, for scale runs.
//
// The server adds what no backend should care about: routing, HTTP Basic
// auth against a bcrypt htpasswd file, optional TLS, Redfish error bodies
// for every error, image download for InsertMedia, and per-system fault
// injection for reliability scenarios.
//
// It must not import anything above lab.
package redfish
