package libvirt

import (
	"errors"
	"fmt"
	"path/filepath"

	golibvirt "libvirt.org/go/libvirt"
	"libvirt.org/go/libvirtxml"

	"github.com/paritylab/paritylab/lab/redfish"
)

// archOf is the guest architecture, which libvirt always records in a
// defined domain's <os><type arch=...>.
func archOf(h *host) string {
	if h.def.OS == nil || h.def.OS.Type == nil {
		return ""
	}
	return h.def.OS.Type.Arch
}

// cpuModelOf is the model a <cpu> element names; lab domains have none
// and run QEMU's default, which the definition does not name.
func cpuModelOf(h *host) string {
	if h.def.CPU == nil || h.def.CPU.Model == nil {
		return ""
	}
	return h.def.CPU.Model.Value
}

// disksOf reports the domain's disk devices with their capacity. A disk
// whose capacity libvirt cannot tell is left out, as sushy-tools does:
// a drive of unknown size would read as an empty one to every client.
func (b *Backend) disksOf(h *host) []redfish.Disk {
	var out []redfish.Disk
	for _, d := range h.def.Devices.Disks {
		if (d.Device != "" && d.Device != "disk") || d.Target == nil || d.Source == nil {
			continue
		}
		name, capacity, err := b.diskSize(h.def.UUID, d)
		if err != nil {
			b.opts.Logger.V(1).Info("Disk not reported: its size is unknown", "domain", h.def.Name, "disk", d.Target.Dev, "error", err.Error())
			continue
		}
		out = append(out, redfish.Disk{
			ID: d.Target.Dev, Name: name, CapacityBytes: int64(capacity), //nolint:gosec // no disk has 2^63 bytes
			Bus: d.Target.Bus, SSD: d.Target.RotationRate == 1,
		})
	}
	return out
}

// diskSize returns a disk's name and capacity: from its storage volume
// (lab disks are volumes of the run's pool), else from the domain's block
// info, which QEMU's driver reads from the image even while the domain is
// off.
func (b *Backend) diskSize(uuid string, d libvirtxml.DomainDisk) (string, uint64, error) {
	name, capacity, volErr := b.volumeSize(d.Source)
	if volErr == nil {
		return name, capacity, nil
	}
	dom, err := b.opts.Conn.LookupDomainByUUIDString(uuid)
	if err != nil {
		return "", 0, fmt.Errorf("look up domain %s: %w", uuid, err)
	}
	defer dom.Free()
	info, err := dom.GetBlockInfo(d.Target.Dev, 0)
	if err != nil {
		return "", 0, errors.Join(volErr, fmt.Errorf("block info of %s: %w", d.Target.Dev, err))
	}
	name = d.Target.Dev
	if p := sourcePath(d.Source); p != "" {
		name = filepath.Base(p)
	}
	return name, info.Capacity, nil
}

func (b *Backend) volumeSize(src *libvirtxml.DomainDiskSource) (string, uint64, error) {
	vol, err := b.lookupVolume(src)
	if err != nil {
		return "", 0, err
	}
	defer vol.Free()
	info, err := vol.GetInfo()
	if err != nil {
		return "", 0, fmt.Errorf("volume info: %w", err)
	}
	name, err := vol.GetName()
	if err != nil {
		return "", 0, fmt.Errorf("volume name: %w", err)
	}
	return name, info.Capacity, nil
}

func (b *Backend) lookupVolume(src *libvirtxml.DomainDiskSource) (*golibvirt.StorageVol, error) {
	if src.Volume != nil {
		pool, err := b.opts.Conn.LookupStoragePoolByName(src.Volume.Pool)
		if err != nil {
			return nil, fmt.Errorf("storage pool %s: %w", src.Volume.Pool, err)
		}
		defer pool.Free()
		vol, err := pool.LookupStorageVolByName(src.Volume.Volume)
		if err != nil {
			return nil, fmt.Errorf("volume %s of pool %s: %w", src.Volume.Volume, src.Volume.Pool, err)
		}
		return vol, nil
	}
	path := sourcePath(src)
	if path == "" {
		return nil, errors.New("disk source is neither a file, a block device nor a volume")
	}
	vol, err := b.opts.Conn.LookupStorageVolByPath(path)
	if err != nil {
		return nil, fmt.Errorf("volume at %s: %w", path, err)
	}
	return vol, nil
}

func sourcePath(src *libvirtxml.DomainDiskSource) string {
	switch {
	case src.File != nil:
		return src.File.File
	case src.Block != nil:
		return src.Block.Dev
	}
	return ""
}
