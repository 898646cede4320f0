// Package metal3 is the lab's host layer in the role of the metal3
// bare-metal operator (BMO): a BareMetalHost controller that registers,
// inspects, provisions, deprovisions and power-manages hosts over Redfish,
// with BMO's field names, provisioning states, error types and annotation
// semantics (reboot.metal3.io[/<key>], baremetalhost.metal3.io/detached,
// inspect.metal3.io, baremetalhost.metal3.io/paused, the
// baremetalhost.metal3.io finalizer).
//
// Upstream BMO drives hosts through Ironic; Ironic cannot run in the lab,
// so this package talks to the BMCs itself, with gofish, an independent
// Redfish client, in the order Ironic does for virtual-media boot
// (shared/reference/redfish.md). It works against any Redfish BMC that
// follows that contract: the lab's emulator (lab/redfish) with either of
// its backends, or sushy-tools.
//
// What Ironic's deploy agent does inside the host (write a disk image,
// wipe disk metadata) is a Deployer, injected: lab/metal3/libvirtdeploy
// writes to the disks of the lab's libvirt domains. User data reaches the
// host as a config-2 config drive, built with lab/images and served to the
// BMC from a loopback HTTP server of the controller.
//
// With Options.PreprovisioningImages (BMO's --build-preprov-image, as on
// an OpenShift hub) hosts get a PreprovisioningImage of their name,
// labels and architecture, owned by them; another controller makes it
// ready with the deploy ramdisk, and inspecting and preparing hosts wait
// for it. A host with spec.customDeploy and no image boots that ramdisk
// from virtual media and runs the named deploy step in it through the
// CustomDeployer, as Ironic's custom-agent deploy does; once the step
// returned, the ramdisk is powered off, the media ejected and the disk
// booted, and the host is provisioned with only the method in its
// status. ImageCustomization answers PreprovisioningImages with the
// lab's deploy ramdisk, as BMO's image provider (OpenShift's
// image-customization controller) does.
//
// Differences from BMO+Ironic, on purpose: each step of provisioning runs
// to completion within one reconcile (power changes are polled there, up
// to Options.PowerTimeout); a live-iso boots once (boot override Cd, Once)
// so later reboots go to the disk; Provisioning.ID is the Redfish system
// UUID, as there is no Ironic node; inspection stays out-of-band (through
// the BMC) where Ironic would boot the PreprovisioningImage's ramdisk for
// it.
//
// It must not import anything above lab.
package metal3
