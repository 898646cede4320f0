package memory

import (
	"fmt"
	"slices"
	"strings"

	"github.com/paritylab/paritylab/lab/redfish"
)

// defaultBootTarget is what a system boots from without an override: its
// disk, like a VM whose disk comes first in the boot order.
const defaultBootTarget = redfish.BootTargetHdd

// system is the state of one system. The Backend's lock guards it.
type system struct {
	spec  SystemSpec
	power string
	boot  redfish.Boot
	media map[string]*media
	boots []string
	nmis  int
	// frozen: the guest hangs (Freeze) until the next power-off.
	frozen bool
}

type media struct {
	types    []string
	inserted bool
	image    redfish.Image
}

func newSystem(spec SystemSpec) *system {
	return &system{
		spec:  spec,
		power: spec.PowerState,
		boot:  redfish.Boot{Target: redfish.BootTargetNone, Enabled: redfish.BootDisabled, Mode: spec.BootMode},
		media: map[string]*media{
			redfish.DeviceCd:     {types: []string{"CD", "DVD"}},
			redfish.DeviceFloppy: {types: []string{"Floppy", "USBStick"}},
		},
	}
}

func (s *system) view() *redfish.System {
	nics := make([]redfish.NIC, len(s.spec.MACs))
	for i, m := range s.spec.MACs {
		nics[i] = redfish.NIC{ID: fmt.Sprintf("nic%d", i), MAC: m}
	}
	out := &redfish.System{
		ID: s.spec.UUID, UUID: s.spec.UUID, Name: s.spec.Name,
		PowerState:  s.power,
		Boot:        s.boot,
		BootTargets: redfish.BootTargetsFor(s.boot.Mode),
		BootModes:   slices.Clone(redfish.BootModes),
		Processors:  s.spec.CPUs,
		Arch:        s.spec.Arch,
		CPUModel:    s.spec.CPUModel,
		MemoryGiB:   s.spec.MemoryGiB,
		NICs:        nics,
		Disks:       disks(s.spec.Disks),
		Media:       map[string]redfish.Media{},
	}
	for name, m := range s.media {
		out.Media[name] = redfish.Media{MediaTypes: slices.Clone(m.types), Inserted: m.inserted, Image: m.image.URL, WriteProtected: m.image.WriteProtected || !m.inserted}
	}
	return out
}

// disks reports the disks of a spec as a lab host's: virtio disks
// vda, vdb, ...
func disks(specs []DiskSpec) []redfish.Disk {
	out := make([]redfish.Disk, len(specs))
	for i, d := range specs {
		out[i] = redfish.Disk{ID: virtioTarget(i), CapacityBytes: d.SizeGiB << 30, Bus: "virtio", SSD: d.SSD}
	}
	return out
}

// virtioTarget is the name of the i-th virtio disk as Linux and libvirt
// count them: vda ... vdz, vdaa, vdab, ...
func virtioTarget(i int) string {
	var suffix []byte
	for n := i + 1; n > 0; n = (n - 1) / 26 {
		suffix = append([]byte{byte('a' + (n-1)%26)}, suffix...)
	}
	return "vd" + string(suffix)
}

// reset follows what a BMC does with a VM (the sushy-tools libvirt
// mapping): On/ForceOn start a stopped system and leave a running one
// alone; ForceOff/GracefulShutdown stop a running one and leave a stopped
// one alone; ForceRestart reboots a running system and starts a stopped
// one; GracefulRestart and Nmi need a running OS and fail with ErrConflict
// on a stopped system.
func (s *system) reset(action redfish.ResetType) error {
	on := s.power == redfish.PowerOn
	switch action {
	case redfish.ResetOn, redfish.ResetForceOn:
		if !on {
			s.powerOn()
		}
	case redfish.ResetForceOff:
		s.power, s.frozen = redfish.PowerOff, false
	case redfish.ResetGracefulShutdown:
		// A hung guest does not act on the power button.
		if !s.frozen {
			s.power = redfish.PowerOff
		}
	case redfish.ResetForceRestart:
		s.powerOn()
	case redfish.ResetGracefulRestart:
		if !on {
			return fmt.Errorf("%w: system %s is Off and GracefulRestart needs a running OS; use On", redfish.ErrConflict, s.spec.Name)
		}
		if !s.frozen {
			s.powerOn()
		}
	case redfish.ResetNmi:
		if !on {
			return fmt.Errorf("%w: system %s is Off and cannot take an NMI; power it On first", redfish.ErrConflict, s.spec.Name)
		}
		s.nmis++
	default:
		return fmt.Errorf("%w: reset type %q is not supported", redfish.ErrInvalid, action)
	}
	return nil
}

// powerOn boots the system: from the override target if one is enabled,
// else from disk. A Once override is spent by this boot and goes back to
// Disabled (the target stays, as the Redfish schema describes).
func (s *system) powerOn() {
	s.power, s.frozen = redfish.PowerOn, false
	target := defaultBootTarget
	if s.boot.Enabled != redfish.BootDisabled && s.boot.Target != redfish.BootTargetNone {
		target = s.boot.Target
	}
	s.boots = append(s.boots, target)
	if s.boot.Enabled == redfish.BootOnce {
		s.boot.Enabled = redfish.BootDisabled
	}
}

func (s *system) setBoot(p redfish.BootPatch) error {
	next, err := redfish.ApplyBootPatch(s.boot, p)
	if err != nil {
		return err
	}
	s.boot = next
	return nil
}

func (s *system) device(name string) (*media, error) {
	m, ok := s.media[name]
	if !ok {
		return nil, fmt.Errorf("virtual media device %q of system %s (devices: %s): %w", name, s.spec.Name, strings.Join(keys(s.media), ", "), redfish.ErrNotFound)
	}
	return m, nil
}

func (s *system) insert(device string, image redfish.Image) error {
	m, err := s.device(device)
	if err != nil {
		return err
	}
	if m.inserted {
		return fmt.Errorf("%w: device %s of system %s already holds %s; eject it first", redfish.ErrConflict, device, s.spec.Name, m.image.URL)
	}
	if image.Path == "" {
		return fmt.Errorf("%w: no local image file to attach", redfish.ErrInvalid)
	}
	m.inserted, m.image = true, image
	return nil
}

func (s *system) eject(device string) error {
	m, err := s.device(device)
	if err != nil {
		return err
	}
	m.inserted, m.image = false, redfish.Image{}
	return nil
}
