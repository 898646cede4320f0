package v1beta1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// HostInventory is the hardware a discovered host reported.
type HostInventory struct {
	// ReportTime is when the host sent this inventory.
	// +optional
	ReportTime *metav1.Time `json:"reportTime,omitempty"`
	// Hostname the host currently has.
	// +optional
	Hostname string `json:"hostname,omitempty"`
	// BMCAddress is the IPv4 address of the host's BMC.
	// +optional
	BMCAddress string `json:"bmcAddress,omitempty"`
	// BMCV6Address is the IPv6 address of the host's BMC.
	// +optional
	BMCV6Address string `json:"bmcV6Address,omitempty"`
	// Memory sizes.
	// +optional
	Memory HostMemory `json:"memory,omitempty"`
	// CPU description.
	// +optional
	CPU HostCPU `json:"cpu,omitempty"`
	// Interfaces are the network interfaces.
	// +optional
	Interfaces []HostInterface `json:"interfaces,omitempty"`
	// Disks are the block devices.
	// +optional
	Disks []HostDisk `json:"disks,omitempty"`
	// Boot is how the host booted.
	// +optional
	Boot HostBoot `json:"boot,omitempty"`
	// SystemVendor identifies the machine.
	// +optional
	SystemVendor HostSystemVendor `json:"systemVendor,omitempty"`
}

// HostMemory gives the host's memory in bytes.
type HostMemory struct {
	// PhysicalBytes is the installed memory.
	// +optional
	PhysicalBytes int64 `json:"physicalBytes,omitempty"`
	// UsableBytes is the memory the OS can use.
	// +optional
	UsableBytes int64 `json:"usableBytes,omitempty"`
}

// HostCPU describes the host's processors.
type HostCPU struct {
	// Count of logical CPUs.
	// +optional
	Count int64 `json:"count,omitempty"`
	// ClockMegahertz is the CPU frequency.
	// +optional
	ClockMegahertz int64 `json:"clockMegahertz,omitempty"`
	// Flags are the CPU feature flags.
	// +optional
	Flags []string `json:"flags,omitempty"`
	// ModelName is the CPU model.
	// +optional
	ModelName string `json:"modelName,omitempty"`
	// Architecture, e.g. x86_64.
	// +optional
	Architecture string `json:"architecture,omitempty"`
}

// HostInterface is one network interface of the host.
type HostInterface struct {
	// Name of the interface, e.g. eno1.
	// +optional
	Name string `json:"name,omitempty"`
	// MacAddress of the interface.
	// +optional
	MacAddress string `json:"macAddress,omitempty"`
	// IPv4Addresses in CIDR notation.
	IPv4Addresses []string `json:"ipV4Addresses"`
	// IPv6Addresses in CIDR notation.
	IPv6Addresses []string `json:"ipV6Addresses"`
	// Flags are the link flags, e.g. up, broadcast.
	Flags []string `json:"flags"`
	// HasCarrier is true when a link is detected.
	// +optional
	HasCarrier bool `json:"hasCarrier,omitempty"`
	// Mtu of the interface.
	// +optional
	Mtu int64 `json:"mtu,omitempty"`
	// SpeedMbps is the link speed.
	// +optional
	SpeedMbps int64 `json:"speedMbps,omitempty"`
	// Vendor of the NIC.
	// +optional
	Vendor string `json:"vendor,omitempty"`
	// Product of the NIC.
	// +optional
	Product string `json:"product,omitempty"`
	// BiosDevName is the BIOS device name, if any.
	// +optional
	BiosDevName string `json:"biosDevName,omitempty"`
	// ClientID is the DHCP client identifier.
	// +optional
	ClientID string `json:"clientID,omitempty"`
}

// HostDisk is one block device of the host.
type HostDisk struct {
	// ID is the disk's stable identifier, what installation_disk_id refers to.
	ID string `json:"id"`
	// Name, e.g. sda.
	// +optional
	Name string `json:"name,omitempty"`
	// Path, e.g. /dev/sda.
	// +optional
	Path string `json:"path,omitempty"`
	// ByPath is the /dev/disk/by-path link.
	// +optional
	ByPath string `json:"byPath,omitempty"`
	// ByID is the /dev/disk/by-id link.
	// +optional
	ByID string `json:"byID,omitempty"`
	// DriveType, e.g. HDD, SSD, ODD.
	// +optional
	DriveType string `json:"driveType,omitempty"`
	// Vendor of the disk.
	// +optional
	Vendor string `json:"vendor,omitempty"`
	// Model of the disk.
	// +optional
	Model string `json:"model,omitempty"`
	// Serial number of the disk.
	// +optional
	Serial string `json:"serial,omitempty"`
	// Wwn is the World Wide Name.
	// +optional
	Wwn string `json:"wwn,omitempty"`
	// Hctl is the SCSI host:channel:target:lun address.
	// +optional
	Hctl string `json:"hctl,omitempty"`
	// SizeBytes is the capacity.
	// +optional
	SizeBytes int64 `json:"sizeBytes,omitempty"`
	// Bootable is true if the disk has a boot flag.
	// +optional
	Bootable bool `json:"bootable,omitempty"`
	// Smart is the SMART data as JSON.
	// +optional
	Smart string `json:"smart,omitempty"`
	// InstallationEligibility says whether the OS may be installed here.
	// +optional
	InstallationEligibility HostInstallationEligibility `json:"installationEligibility,omitempty"`
	// IoPerf holds measured disk performance.
	// +optional
	IoPerf HostIOPerf `json:"ioPerf,omitempty"`
}

// HostInstallationEligibility says whether a disk can hold the installed OS.
type HostInstallationEligibility struct {
	// Eligible is true when the disk can be the installation disk.
	// +optional
	Eligible bool `json:"eligible,omitempty"`
	// NotEligibleReasons explain why not.
	NotEligibleReasons []string `json:"notEligibleReasons"`
}

// HostIOPerf is measured disk performance.
type HostIOPerf struct {
	// SyncDurationMilliseconds is the 99th percentile fsync latency.
	// +optional
	SyncDurationMilliseconds int64 `json:"syncDurationMilliseconds,omitempty"`
}

// HostBoot is how the host booted the discovery image.
type HostBoot struct {
	// CurrentBootMode is "uefi" or "bios".
	// +optional
	CurrentBootMode string `json:"currentBootMode,omitempty"`
	// PxeInterface is the interface the host PXE-booted from, if any.
	// +optional
	PxeInterface string `json:"pxeInterface,omitempty"`
	// DeviceType is the kind of device booted from.
	// +optional
	DeviceType string `json:"deviceType,omitempty"`
}

// HostSystemVendor identifies the machine.
type HostSystemVendor struct {
	// Manufacturer of the machine.
	// +optional
	Manufacturer string `json:"manufacturer,omitempty"`
	// ProductName is the machine model.
	// +optional
	ProductName string `json:"productName,omitempty"`
	// SerialNumber of the machine.
	// +optional
	SerialNumber string `json:"serialNumber,omitempty"`
	// Virtual is true for a virtual machine.
	// +optional
	Virtual bool `json:"virtual,omitempty"`
}
