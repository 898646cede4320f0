// Package libvirtd gives the lab a libvirt daemon to talk to. When one
// already answers on the system socket it is used and left alone; otherwise
// the lab starts virtlogd and libvirtd itself, in the foreground, as
// supervised processes recorded in the run's ledger, and stops exactly
// those. Nothing here changes the host's libvirt configuration: with
// Debian's daemon packages and no config packages, libvirt runs on its
// compiled-in defaults and defines no networks, so no bridge ever appears.
//
// It imports lab/process and lab/state only.
package libvirtd
