package metal3

import (
	"math"
	"slices"
	"strings"

	bmov1alpha1 "github.com/metal3-io/baremetal-operator/apis/metal3.io/v1alpha1"
	gfredfish "github.com/stmcginnis/gofish/redfish"
)

// architectures maps Redfish instruction sets to the names Ironic's
// inspection reports.
var architectures = map[gfredfish.InstructionSet]string{
	gfredfish.X8664InstructionSet:    "x86_64",
	gfredfish.X86InstructionSet:      "i686",
	gfredfish.ARMA64InstructionSet:   "aarch64",
	gfredfish.PowerISAInstructionSet: "ppc64le",
}

// inspect reads what an out-of-band (Redfish) inspection can see: system
// vendor, CPUs, memory, NICs with MACs and, where the BMC lists them,
// processors and drives. NICs are required; the rest is best effort, as
// in Ironic's redfish inspect interface.
func (c *bmcConn) inspect(bootMAC string) (*bmov1alpha1.HardwareDetails, error) {
	sys := c.system
	hw := &bmov1alpha1.HardwareDetails{
		SystemVendor: bmov1alpha1.HardwareSystemVendor{
			Manufacturer: sys.Manufacturer, ProductName: sys.Model, SerialNumber: sys.SerialNumber,
		},
		Firmware:     bmov1alpha1.Firmware{BIOS: bmov1alpha1.BIOS{Version: sys.BIOSVersion}},
		RAMMebibytes: int(math.Round(float64(sys.MemorySummary.TotalSystemMemoryGiB) * 1024)),
		CPU:          bmov1alpha1.CPU{Count: sys.ProcessorSummary.Count, Model: sys.ProcessorSummary.Model},
		Hostname:     sys.HostName,
	}
	nics, err := c.nics(bootMAC)
	if err != nil {
		return nil, err
	}
	hw.NIC = nics
	c.processors(&hw.CPU)
	hw.Storage = c.drives()
	return hw, nil
}

func (c *bmcConn) nics(bootMAC string) ([]bmov1alpha1.NIC, error) {
	ifaces, err := c.system.EthernetInterfaces()
	if err != nil {
		return nil, bmcError("list the Ethernet interfaces of system "+c.system.ID, err)
	}
	out := make([]bmov1alpha1.NIC, 0, len(ifaces))
	for _, i := range ifaces {
		mac := strings.ToLower(i.MACAddress)
		if mac == "" {
			mac = strings.ToLower(i.PermanentMACAddress)
		}
		out = append(out, bmov1alpha1.NIC{
			Name: i.ID, MAC: mac, SpeedGbps: i.SpeedMbps / 1000,
			PXE: bootMAC != "" && strings.EqualFold(mac, bootMAC),
		})
	}
	// gofish reads collection members concurrently: give a stable order.
	slices.SortFunc(out, func(a, b bmov1alpha1.NIC) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

// processors fills the architecture, model and clock from the Processors
// collection when the BMC has one.
func (c *bmcConn) processors(cpu *bmov1alpha1.CPU) {
	procs, err := c.system.Processors()
	if err != nil {
		return
	}
	for _, p := range procs {
		if arch, ok := architectures[p.InstructionSet]; ok && cpu.Arch == "" {
			cpu.Arch = arch
		}
		if cpu.Model == "" {
			cpu.Model = p.Model
		}
		if cpu.ClockMegahertz == 0 {
			cpu.ClockMegahertz = bmov1alpha1.ClockSpeed(p.MaxSpeedMHz)
		}
	}
}

// drives lists the drives of the system's Storage, when it has any.
func (c *bmcConn) drives() []bmov1alpha1.Storage {
	storages, err := c.system.Storage()
	if err != nil {
		return nil
	}
	var out []bmov1alpha1.Storage
	for _, st := range storages {
		drives, err := st.Drives()
		if err != nil {
			continue
		}
		for _, d := range drives {
			out = append(out, bmov1alpha1.Storage{
				Name: d.ID, Type: diskType(d.MediaType), SizeBytes: bmov1alpha1.Capacity(d.CapacityBytes),
				Vendor: d.Manufacturer, Model: d.Model, SerialNumber: d.SerialNumber,
				Rotational: d.MediaType == gfredfish.HDDMediaType,
			})
		}
	}
	slices.SortFunc(out, func(a, b bmov1alpha1.Storage) int { return strings.Compare(a.Name, b.Name) })
	return out
}

func diskType(m gfredfish.MediaType) bmov1alpha1.DiskType {
	if m == gfredfish.SSDMediaType {
		return bmov1alpha1.SSD
	}
	return bmov1alpha1.HDD
}
