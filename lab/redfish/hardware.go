package redfish

// Disk is a disk drive of a system, as a Backend reports it. Backends
// speak libvirt's vocabulary (target names, buses); the server turns it
// into Redfish's (Storage, Drive, Protocol, MediaType).
type Disk struct {
	// ID names the disk among the system's disks: its target device
	// (vda, sda), which is also what the guest's kernel usually calls it.
	ID string
	// Name is the backend's name for it (a volume name); default ID.
	Name string
	// CapacityBytes is the size the guest sees.
	CapacityBytes int64
	// Bus is the bus the disk hangs off, as libvirt names it (virtio,
	// sata, scsi, nvme, ide, usb). Disks of one bus share a storage
	// controller, as on a server.
	Bus string
	// SSD marks a non-rotating disk; the default is a rotating one,
	// which is what a guest's kernel assumes of a virtio disk.
	SSD bool
}

// CPUArch is how Redfish describes an architecture.
type CPUArch struct {
	// Architecture is the Processor's ProcessorArchitecture.
	Architecture string
	// InstructionSet is the Processor's InstructionSet.
	InstructionSet string
}

// cpuArchs maps the names libvirt and uname use to Redfish's.
var cpuArchs = map[string]CPUArch{
	"x86_64":  {"x86", "x86-64"},
	"i686":    {"x86", "x86"},
	"aarch64": {"ARM", "ARM-A64"},
	"armv7l":  {"ARM", "ARM-A32"},
	"ppc64le": {"Power", "PowerISA"},
	"ppc64":   {"Power", "PowerISA"},
	"mips64":  {"MIPS", "MIPS64"},
	"riscv64": {"RISC-V", "RV64"},
}

// CPUArchitecture returns the Redfish names of an architecture (x86_64,
// aarch64, ...), and false for one Redfish has no names for.
func CPUArchitecture(arch string) (CPUArch, bool) {
	a, ok := cpuArchs[arch]
	return a, ok
}

// busProtocols maps libvirt disk buses to Redfish Drive protocols. A
// virtio disk is a PCI Express function on the q35 machines the lab
// runs; virtio-scsi speaks SCSI, which Redfish files under SAS. IDE has
// no Redfish protocol and gets none.
var busProtocols = map[string]string{
	"virtio": "PCIe",
	"sata":   "SATA",
	"scsi":   "SAS",
	"nvme":   "NVMe",
	"usb":    "USB",
}
