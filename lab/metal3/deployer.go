package metal3

import "context"

// Deployer does on a host what Ironic's deploy agent does there: it writes
// disk images to the host's disk and wipes it. The controller calls it
// only while the host is powered off.
type Deployer interface {
	// WriteImage writes image to the host's (first) disk. It downloads
	// image.URL itself and verifies image.Checksum when one is given.
	WriteImage(ctx context.Context, host Host, image Image) error
	// WipeDisk erases the partition tables and file-system signatures at
	// the start of the host's disk: Ironic's metadata cleaning.
	WipeDisk(ctx context.Context, host Host) error
}

// Host identifies the machine behind a BareMetalHost to a Deployer.
type Host struct {
	// Namespace and Name of the BareMetalHost.
	Namespace, Name string
	// BMCAddress is spec.bmc.address.
	BMCAddress string
	// SystemID is the Redfish ComputerSystem Id (for the lab's libvirt
	// hosts, the domain UUID).
	SystemID string
	// BootMACAddress is spec.bootMACAddress.
	BootMACAddress string
}

// Image is a disk image to write, as spec.image gives it.
type Image struct {
	// URL is where the image is downloaded from.
	URL string
	// Format is "raw", "qcow2", or "" to detect it.
	Format string
	// Checksum of the image (or the URL of a checksum file), and its
	// type: "md5", "sha256", "sha512", or "" / "auto" to tell by length.
	Checksum     string
	ChecksumType string
}

// CustomDeployer is the part of the deploy ramdisk that runs custom
// deploy steps (spec.customDeploy.method): Ironic runs the step in the
// ramdisk the host booted and finishes the deploy when it returns.
type CustomDeployer interface {
	// DeployStepDone reports whether the step named method finished on
	// the host, which booted its PreprovisioningImage for it; an error is
	// the step failing, and fails the deploy.
	DeployStepDone(ctx context.Context, host Host, method string) (bool, error)
}
