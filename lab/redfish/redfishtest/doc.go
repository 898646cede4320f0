// Package redfishtest drives a Redfish service the way Ironic does, with
// the real clients (python3-sushy and gofish), for tests of any Backend:
// the memory one here, the libvirt one in the lab. It also serves the
// image to insert and writes htpasswd files.
//
// It is imported by tests only, and imports nothing from the lab but
// lab/redfish.
package redfishtest
