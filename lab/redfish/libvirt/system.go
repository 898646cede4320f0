package libvirt

import (
	"context"
	"fmt"
	"slices"

	"github.com/paritylab/paritylab/lab/machines"
	"github.com/paritylab/paritylab/lab/redfish"
)

// System reports a domain as a Redfish system.
func (b *Backend) System(_ context.Context, id string) (*redfish.System, error) {
	// Under the lock a cold restart after a guest reboot (off, then on)
	// is one step: a real BMC reports a rebooting server on throughout.
	b.mu.Lock()
	defer b.mu.Unlock()
	h, err := b.load(id)
	if err != nil {
		return nil, err
	}
	sys := &redfish.System{
		ID: h.def.UUID, UUID: h.def.UUID, Name: h.def.Name,
		PowerState:  redfish.PowerOff,
		Boot:        bootOf(h),
		BootTargets: redfish.BootTargetsFor(bootOf(h).Mode),
		BootModes:   slices.Clone(redfish.BootModes),
		Processors:  int(h.def.VCPU.Value),
		Arch:        archOf(h),
		CPUModel:    cpuModelOf(h),
		MemoryGiB:   memoryGiB(h),
		NICs:        nicsOf(h),
		Disks:       b.disksOf(h),
		Media:       mediaOf(h),
	}
	if h.on {
		sys.PowerState = redfish.PowerOn
	}
	return sys, nil
}

// Device names of boot order and Redfish boot targets.
var targetDevice = map[string]string{
	redfish.BootTargetHdd:      machines.BootDisk,
	redfish.BootTargetCd:       machines.BootCdrom,
	redfish.BootTargetPxe:      machines.BootNetwork,
	redfish.BootTargetUefiHTTP: machines.BootNetwork,
}

func bootOf(h *host) redfish.Boot {
	boot := redfish.Boot{Target: h.meta.BootTarget, Enabled: h.meta.BootEnabled, Mode: redfish.BootModeLegacy}
	if boot.Target == "" {
		boot.Target = redfish.BootTargetNone
	}
	if boot.Enabled == "" {
		boot.Enabled = redfish.BootDisabled
	}
	if machines.FirmwareOf(h.def) == machines.FirmwareUEFI {
		boot.Mode = redfish.BootModeUEFI
	}
	return boot
}

func memoryGiB(h *host) float64 {
	m := h.def.Memory
	if m == nil {
		return 0
	}
	mib := float64(m.Value)
	switch m.Unit {
	case "KiB", "k", "":
		mib /= 1024
	case "GiB", "G":
		mib *= 1024
	}
	return mib / 1024
}

func nicsOf(h *host) []redfish.NIC {
	var out []redfish.NIC
	for i, nic := range h.def.Devices.Interfaces {
		if nic.MAC != nil {
			out = append(out, redfish.NIC{ID: fmt.Sprintf("nic%d", i), MAC: nic.MAC.Address})
		}
	}
	return out
}

func mediaOf(h *host) map[string]redfish.Media {
	cd := redfish.Media{MediaTypes: []string{"CD", "DVD"}, WriteProtected: true}
	if disk, err := machines.Cdrom(h.def); err == nil && machines.MediaPath(disk) != "" {
		cd.Inserted, cd.Image = true, h.meta.MediaURL
	}
	return map[string]redfish.Media{
		redfish.DeviceCd: cd,
		// Lab hosts have no floppy drive; it is listed, as on BMCs
		// whose servers lack one, and refuses inserts.
		redfish.DeviceFloppy: {MediaTypes: []string{"Floppy", "USBStick"}, WriteProtected: true},
	}
}
