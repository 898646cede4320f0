package machines

import (
	"fmt"

	"libvirt.org/go/libvirtxml"
)

// Accel is how guests run.
type Accel string

// Accelerators.
const (
	// AccelKVM runs guests with hardware virtualization.
	AccelKVM Accel = "kvm"
	// AccelTCG emulates the CPU (libvirt domain type "qemu"): slower, but
	// works wherever QEMU does.
	AccelTCG Accel = "tcg"
)

// Firmware is what a host boots with.
type Firmware string

// Firmwares.
const (
	FirmwareBIOS Firmware = "bios"
	FirmwareUEFI Firmware = "uefi"
)

// Boot devices, in the order a host tries them by default: its disk, then
// virtual media, then the network.
const (
	BootDisk    = "disk"
	BootCdrom   = "cdrom"
	BootNetwork = "network"
)

var defaultBootOrder = []string{BootDisk, BootCdrom, BootNetwork}

// DomainSpec is everything a lab domain is made of.
type DomainSpec struct {
	Name      string
	Accel     Accel
	VCPUs     uint
	MemoryMiB uint
	Firmware  Firmware
	// DiskPath is the qcow2 volume of the host's disk.
	DiskPath string
	// SerialLog receives the serial console.
	SerialLog string
	// MAC of the NIC.
	MAC string
	// Subnet is the user-mode network of the NIC, a /24 such as
	// 10.100.3.0: the guest gets .15 by DHCP and reaches host loopback at
	// .2. Empty: QEMU's default 10.0.2.0/24.
	Subnet string
	// Serial is the SMBIOS system serial number the guest sees.
	Serial   string
	Metadata Metadata
}

// Device names inside the guest-facing hardware.
const (
	diskTarget  = "vda"
	cdromTarget = "sda"
)

// NewDomain builds the libvirt definition of a lab host, powered off, with
// an empty CD-ROM and the default boot order.
func NewDomain(s DomainSpec) (*libvirtxml.Domain, error) {
	meta, err := s.Metadata.element()
	if err != nil {
		return nil, err
	}
	domType := "qemu"
	if s.Accel == AccelKVM {
		domType = "kvm"
	}
	dom := &libvirtxml.Domain{
		Type:     domType,
		Name:     s.Name,
		Metadata: meta,
		Memory:   &libvirtxml.DomainMemory{Value: s.MemoryMiB, Unit: "MiB"},
		VCPU:     &libvirtxml.DomainVCPU{Value: s.VCPUs},
		OS:       osFor(s.Firmware),
		SysInfo:  []libvirtxml.DomainSysInfo{smbios(s.Serial)},
		Features: &libvirtxml.DomainFeatureList{
			// ACPI: GracefulShutdown and GracefulRestart reach the guest.
			ACPI: &libvirtxml.DomainFeature{},
			APIC: &libvirtxml.DomainFeatureAPIC{},
		},
		OnPoweroff: "destroy",
		OnReboot:   "restart",
		OnCrash:    "destroy",
		Devices:    devices(s),
	}
	SetBootOrder(dom, defaultBootOrder...)
	return dom, nil
}

func osFor(fw Firmware) *libvirtxml.DomainOS {
	os := &libvirtxml.DomainOS{
		Type:   &libvirtxml.DomainOSType{Arch: "x86_64", Machine: "q35", Type: "hvm"},
		SMBios: &libvirtxml.DomainSMBios{Mode: "sysinfo"},
	}
	if fw == FirmwareUEFI {
		os.Firmware = "efi"
		// Secure boot needs SMM and signed loaders; lab images are neither.
		os.FirmwareInfo = &libvirtxml.DomainOSFirmwareInfo{Features: []libvirtxml.DomainOSFirmwareFeature{
			{Name: "secure-boot", Enabled: "no"},
			{Name: "enrolled-keys", Enabled: "no"},
		}}
	}
	return os
}

func smbios(serial string) libvirtxml.DomainSysInfo {
	return libvirtxml.DomainSysInfo{SMBIOS: &libvirtxml.DomainSysInfoSMBIOS{
		System: &libvirtxml.DomainSysInfoSystem{Entry: []libvirtxml.DomainSysInfoEntry{
			{Name: "manufacturer", Value: "paritylab"},
			{Name: "product", Value: "virtual bare-metal host"},
			{Name: "serial", Value: serial},
		}},
	}}
}

func devices(s DomainSpec) *libvirtxml.DomainDeviceList {
	return &libvirtxml.DomainDeviceList{
		Disks: []libvirtxml.DomainDisk{
			{
				Device: "disk",
				Driver: &libvirtxml.DomainDiskDriver{Name: "qemu", Type: "qcow2"},
				Source: &libvirtxml.DomainDiskSource{File: &libvirtxml.DomainDiskSourceFile{File: s.DiskPath}},
				Target: &libvirtxml.DomainDiskTarget{Dev: diskTarget, Bus: "virtio"},
			},
			{
				// Virtual media: empty until a BMC inserts an image.
				Device:   "cdrom",
				Driver:   &libvirtxml.DomainDiskDriver{Name: "qemu", Type: "raw"},
				Target:   &libvirtxml.DomainDiskTarget{Dev: cdromTarget, Bus: "sata"},
				ReadOnly: &libvirtxml.DomainDiskReadOnly{},
			},
		},
		Interfaces: []libvirtxml.DomainInterface{userNIC(s)},
		Serials: []libvirtxml.DomainSerial{{
			Source: &libvirtxml.DomainChardevSource{File: &libvirtxml.DomainChardevSourceFile{Path: s.SerialLog, Append: "on"}},
			Target: &libvirtxml.DomainSerialTarget{Port: uintPtr(0)},
		}},
		Consoles: []libvirtxml.DomainConsole{{
			Source: &libvirtxml.DomainChardevSource{File: &libvirtxml.DomainChardevSourceFile{Path: s.SerialLog, Append: "on"}},
			Target: &libvirtxml.DomainConsoleTarget{Type: "serial", Port: uintPtr(0)},
		}},
		// Entropy for guests that would otherwise wait for it at boot.
		RNGs: []libvirtxml.DomainRNG{{
			Model:   "virtio",
			Backend: &libvirtxml.DomainRNGBackend{Random: &libvirtxml.DomainRNGBackendRandom{Device: "/dev/urandom"}},
		}},
		MemBalloon: &libvirtxml.DomainMemBalloon{Model: "none"},
	}
}

func uintPtr(v uint) *uint { return &v }

// userNIC is a virtio NIC on QEMU user-mode networking: the guest reaches
// host loopback services at the gateway (.2 of its subnet); nothing is
// added to the host network. A subnet per host gives every node its own
// address, as on a real network.
func userNIC(s DomainSpec) libvirtxml.DomainInterface {
	nic := libvirtxml.DomainInterface{
		Source: &libvirtxml.DomainInterfaceSource{User: &libvirtxml.DomainInterfaceSourceUser{}},
		MAC:    &libvirtxml.DomainInterfaceMAC{Address: s.MAC},
		Model:  &libvirtxml.DomainInterfaceModel{Type: "virtio"},
	}
	if s.Subnet != "" {
		nic.IP = []libvirtxml.DomainInterfaceIP{{Address: s.Subnet, Family: "ipv4", Prefix: 24}}
	}
	return nic
}

// SetBootOrder gives the named devices boot orders 1, 2, ... and clears the
// others, the way a BMC's boot override is applied to a domain.
func SetBootOrder(dom *libvirtxml.Domain, first ...string) {
	order := map[string]uint{}
	for i, d := range first {
		order[d] = uint(i + 1)
	}
	boot := func(device string) *libvirtxml.DomainDeviceBoot {
		if n, ok := order[device]; ok {
			return &libvirtxml.DomainDeviceBoot{Order: n}
		}
		return nil
	}
	for i := range dom.Devices.Disks {
		d := &dom.Devices.Disks[i]
		d.Boot = boot(d.Device)
	}
	for i := range dom.Devices.Interfaces {
		dom.Devices.Interfaces[i].Boot = boot(BootNetwork)
	}
	dom.OS.BootDevices = nil
}

// BootOrder returns the devices with a boot order, first first.
func BootOrder(dom *libvirtxml.Domain) []string {
	byOrder := map[uint]string{}
	for _, d := range dom.Devices.Disks {
		if d.Boot != nil {
			byOrder[d.Boot.Order] = d.Device
		}
	}
	for _, nic := range dom.Devices.Interfaces {
		if nic.Boot != nil {
			byOrder[nic.Boot.Order] = BootNetwork
		}
	}
	var out []string
	for i := uint(1); i <= uint(len(byOrder)); i++ {
		if d, ok := byOrder[i]; ok {
			out = append(out, d)
		}
	}
	return out
}

// Cdrom returns the CD-ROM device of a lab domain.
func Cdrom(dom *libvirtxml.Domain) (*libvirtxml.DomainDisk, error) {
	for i := range dom.Devices.Disks {
		if dom.Devices.Disks[i].Device == "cdrom" {
			return &dom.Devices.Disks[i], nil
		}
	}
	return nil, fmt.Errorf("domain %s has no CD-ROM", dom.Name)
}

// SetFirmware switches a domain between BIOS and UEFI.
func SetFirmware(dom *libvirtxml.Domain, fw Firmware) {
	boot := BootOrder(dom)
	dom.OS = osFor(fw)
	SetBootOrder(dom, boot...)
}

// FirmwareOf reports a domain's firmware.
func FirmwareOf(dom *libvirtxml.Domain) Firmware {
	if dom.OS != nil && (dom.OS.Firmware == "efi" || (dom.OS.Loader != nil && dom.OS.Loader.Type == "pflash")) {
		return FirmwareUEFI
	}
	return FirmwareBIOS
}

// MediaPath returns the image in a CD-ROM, or "" when it is empty.
func MediaPath(cd *libvirtxml.DomainDisk) string {
	if cd.Source == nil || cd.Source.File == nil {
		return ""
	}
	return cd.Source.File.File
}
