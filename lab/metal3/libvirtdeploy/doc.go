// Package libvirtdeploy is the lab's stand-in for Ironic's deploy agent: a
// metal3.Deployer that writes disk images onto, and wipes, the disks of the
// lab's libvirt domains, found by UUID (the Redfish system Id the lab's
// BMC emulator serves them under). Images are downloaded from loopback
// only, verified against their checksum, converted to raw when they are
// qcow2, and written with lab/machines.WriteImage while the domain is off.
//
// It writes only to domains of its own lab run (their paritylab metadata
// names the run), never to a disk the lab did not make.
//
// It must not import anything above lab.
package libvirtdeploy
