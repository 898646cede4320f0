package libvirt

import (
	"context"
	"slices"
	"testing"

	golibvirt "libvirt.org/go/libvirt"
	"libvirt.org/go/libvirtxml"

	"github.com/paritylab/paritylab/lab/redfish"
)

// testVolume creates a qcow2 volume in the test driver's only pool and
// returns its path.
func testVolume(t *testing.T, conn *golibvirt.Connect, name string, gib uint64) string {
	t.Helper()
	pool, err := conn.LookupStoragePoolByName("default-pool")
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Free()
	def := &libvirtxml.StorageVolume{
		Name:     name,
		Capacity: &libvirtxml.StorageVolumeSize{Value: gib, Unit: "GiB"},
		Target:   &libvirtxml.StorageVolumeTarget{Format: &libvirtxml.StorageVolumeTargetFormat{Type: "qcow2"}},
	}
	raw, err := def.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	vol, err := pool.StorageVolCreateXML(raw, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = vol.Delete(0); _ = vol.Free() })
	path, err := vol.GetPath()
	if err != nil {
		t.Fatal(err)
	}
	return path
}

// A lab host's disk is a volume of the run's pool: its size is the
// volume's capacity, and a second disk on another bus, marked as not
// rotating, is an SSD of its own controller.
func TestSystemHardwareFromVolumes(t *testing.T) {
	conn := testDriver(t)
	root := testVolume(t, conn, "pl-hw-host-0.qcow2", 20)
	data := testVolume(t, conn, "pl-hw-host-0-data.qcow2", 5)
	id := defineHostWith(t, conn, "pl-hw", "host-0", root, func(def *libvirtxml.Domain) {
		def.Devices.Disks = append(def.Devices.Disks, libvirtxml.DomainDisk{
			Device: "disk",
			Driver: &libvirtxml.DomainDiskDriver{Name: "qemu", Type: "qcow2"},
			Source: &libvirtxml.DomainDiskSource{File: &libvirtxml.DomainDiskSourceFile{File: data}},
			Target: &libvirtxml.DomainDiskTarget{Dev: "sdb", Bus: "sata", RotationRate: 1},
		})
	})
	sys, err := newBackend(t, conn, "pl-hw").System(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	if sys.Arch != "x86_64" || sys.Processors != 2 || sys.CPUModel != "" {
		t.Errorf("arch %q, %d processors, model %q: want x86_64, 2, none", sys.Arch, sys.Processors, sys.CPUModel)
	}
	want := []redfish.Disk{
		{ID: "vda", Name: "pl-hw-host-0.qcow2", CapacityBytes: 20 << 30, Bus: "virtio"},
		{ID: "sdb", Name: "pl-hw-host-0-data.qcow2", CapacityBytes: 5 << 30, Bus: "sata", SSD: true},
	}
	if !slices.Equal(sys.Disks, want) {
		t.Errorf("disks %+v, want %+v (the CD-ROM is not a disk)", sys.Disks, want)
	}
}

// A disk that is no pool's volume gets its size from the domain's block
// info; the test driver makes that up, so the test compares with what it
// says.
func TestSystemDiskOutsideAPool(t *testing.T) {
	conn := testDriver(t)
	id := defineHost(t, conn, "pl-hw", "host-1")
	dom, err := conn.LookupDomainByUUIDString(id)
	if err != nil {
		t.Fatal(err)
	}
	defer dom.Free()
	info, err := dom.GetBlockInfo("vda", 0)
	if err != nil {
		t.Fatal(err)
	}
	sys, err := newBackend(t, conn, "pl-hw").System(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	want := []redfish.Disk{{ID: "vda", Name: "null", CapacityBytes: int64(info.Capacity), Bus: "virtio"}} //nolint:gosec // the test driver's size is small
	if !slices.Equal(sys.Disks, want) {
		t.Errorf("disks %+v, want %+v", sys.Disks, want)
	}
}

// The architecture and the CPU model come from the definition.
func TestSystemArchAndModel(t *testing.T) {
	conn := testDriver(t)
	id := defineHostWith(t, conn, "pl-hw", "host-2", "/dev/null", func(def *libvirtxml.Domain) {
		def.CPU = &libvirtxml.DomainCPU{Mode: "custom", Match: "exact", Model: &libvirtxml.DomainCPUModel{Value: "qemu64"}}
	})
	sys, err := newBackend(t, conn, "pl-hw").System(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	if sys.Arch != "x86_64" || sys.CPUModel != "qemu64" {
		t.Errorf("arch %q model %q, want x86_64 and qemu64", sys.Arch, sys.CPUModel)
	}
	if _, ok := redfish.CPUArchitecture(sys.Arch); !ok {
		t.Errorf("arch %q has no Redfish names", sys.Arch)
	}
}
