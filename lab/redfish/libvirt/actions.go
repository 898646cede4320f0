package libvirt

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/paritylab/paritylab/lab/machines"
	"github.com/paritylab/paritylab/lab/redfish"
)

// Reset performs a power action.
func (b *Backend) Reset(_ context.Context, id string, action redfish.ResetType) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	h, err := b.load(id)
	if err != nil {
		return err
	}
	conn, uuid := b.opts.Conn, h.def.UUID
	b.powerActions[uuid] = time.Now()
	if hung, err := machines.IsPaused(conn, uuid); err != nil {
		return err
	} else if hung && (action == redfish.ResetGracefulShutdown || action == redfish.ResetGracefulRestart) {
		// A frozen guest (a hang fault) does not act on the power button.
		return nil
	}
	switch action {
	case redfish.ResetOn, redfish.ResetForceOn:
		if h.on {
			return nil
		}
		return b.boot(h)
	case redfish.ResetForceOff:
		return machines.PowerOff(conn, uuid)
	case redfish.ResetGracefulShutdown:
		if !h.on {
			return nil
		}
		return machines.Shutdown(conn, uuid)
	case redfish.ResetForceRestart:
		if err := machines.PowerOff(conn, uuid); err != nil {
			return err
		}
		return b.boot(h)
	case redfish.ResetGracefulRestart:
		if !h.on {
			return fmt.Errorf("system %s is off: %w", h.def.Name, redfish.ErrConflict)
		}
		// The reboot event handler applies a pending boot override.
		return machines.Reboot(conn, uuid)
	case redfish.ResetNmi:
		if !h.on {
			return fmt.Errorf("system %s is off: %w", h.def.Name, redfish.ErrConflict)
		}
		return machines.InjectNMI(conn, uuid)
	}
	return fmt.Errorf("reset type %q: %w", action, redfish.ErrInvalid)
}

// Freeze pauses a running domain (a hang fault): QEMU keeps it, so the
// system stays On, while the guest stops dead.
func (b *Backend) Freeze(_ context.Context, id string) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	h, err := b.load(id)
	if err != nil {
		return err
	}
	return machines.Suspend(b.opts.Conn, h.def.UUID)
}

// boot starts a domain that is off, spending a "once" override: the domain
// starts with the override's boot order, after which the definition goes
// back to the normal order and the override to Disabled.
func (b *Backend) boot(h *host) error {
	if err := b.powerOn(b.opts.Conn, h.def.UUID); err != nil {
		return err
	}
	if h.meta.BootEnabled != redfish.BootOnce {
		return nil
	}
	h.meta.BootEnabled = redfish.BootDisabled
	machines.SetBootOrder(h.def, defaultOrder()...)
	return b.save(h)
}

func defaultOrder() []string {
	return []string{machines.BootDisk, machines.BootCdrom, machines.BootNetwork}
}

// SetBoot changes the boot override; it takes effect at the next boot.
func (b *Backend) SetBoot(_ context.Context, id string, patch redfish.BootPatch) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	h, err := b.load(id)
	if err != nil {
		return err
	}
	boot, err := redfish.ApplyBootPatch(bootOf(h), patch)
	if err != nil {
		return err
	}
	fw := machines.FirmwareBIOS
	if boot.Mode == redfish.BootModeUEFI {
		fw = machines.FirmwareUEFI
	}
	if fw != machines.FirmwareOf(h.def) {
		machines.SetFirmware(h.def, fw)
	}
	order := defaultOrder()
	if boot.Enabled != redfish.BootDisabled && boot.Target != redfish.BootTargetNone {
		first := targetDevice[boot.Target]
		order = append([]string{first}, slices.DeleteFunc(order, func(d string) bool { return d == first })...)
	}
	machines.SetBootOrder(h.def, order...)
	h.meta.BootTarget, h.meta.BootEnabled = boot.Target, boot.Enabled
	return b.save(h)
}

// InsertMedia attaches an image read-only to the CD-ROM.
func (b *Backend) InsertMedia(_ context.Context, id, device string, img redfish.Image) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	h, err := b.load(id)
	if err != nil {
		return err
	}
	if device != redfish.DeviceCd {
		return fmt.Errorf("virtual media %s: lab hosts only have a CD-ROM: %w", device, redfish.ErrInvalid)
	}
	if mediaOf(h)[redfish.DeviceCd].Inserted {
		return fmt.Errorf("virtual media %s of %s holds an image; eject it first: %w", device, h.def.Name, redfish.ErrConflict)
	}
	if err := machines.SetMedia(b.opts.Conn, h.def.UUID, img.Path); err != nil {
		return err
	}
	return b.setMediaURL(id, img.URL)
}

// EjectMedia empties the CD-ROM.
func (b *Backend) EjectMedia(_ context.Context, id, device string) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	h, err := b.load(id)
	if err != nil {
		return err
	}
	if device == redfish.DeviceFloppy {
		return nil
	}
	if device != redfish.DeviceCd {
		return fmt.Errorf("virtual media %s: %w", device, redfish.ErrNotFound)
	}
	if err := machines.SetMedia(b.opts.Conn, h.def.UUID, ""); err != nil {
		return err
	}
	return b.setMediaURL(id, "")
}

// setMediaURL records the client's URL next to the attached file.
func (b *Backend) setMediaURL(id, url string) error {
	h, err := b.load(id)
	if err != nil {
		return err
	}
	h.meta.MediaURL = url
	return b.save(h)
}
