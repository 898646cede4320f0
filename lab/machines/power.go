package machines

import (
	"fmt"
	"os/exec"

	"libvirt.org/go/libvirt"
	"libvirt.org/go/libvirtxml"
)

// Domain operations by UUID, shared by the lab and the Redfish emulator's
// libvirt backend. Each opens the domain, acts, and frees it.

func withDomain(conn *libvirt.Connect, uuid string, fn func(*libvirt.Domain) error) error {
	dom, err := conn.LookupDomainByUUIDString(uuid)
	if err != nil {
		return fmt.Errorf("look up domain %s: %w", uuid, err)
	}
	defer dom.Free()
	return fn(dom)
}

// IsOn reports whether a domain runs (paused counts as on, as for a BMC).
func IsOn(conn *libvirt.Connect, uuid string) (bool, error) {
	var on bool
	err := withDomain(conn, uuid, func(d *libvirt.Domain) error {
		var err error
		on, err = d.IsActive()
		return err
	})
	return on, err
}

// PowerOn starts a domain that is off; an already running one is left alone.
func PowerOn(conn *libvirt.Connect, uuid string) error {
	return withDomain(conn, uuid, func(d *libvirt.Domain) error {
		if on, _ := d.IsActive(); on {
			return nil
		}
		if err := d.Create(); err != nil {
			return fmt.Errorf("start domain %s: %w", uuid, err)
		}
		return nil
	})
}

// PowerOff pulls the plug; an off domain is left alone.
func PowerOff(conn *libvirt.Connect, uuid string) error {
	return withDomain(conn, uuid, func(d *libvirt.Domain) error {
		if on, _ := d.IsActive(); !on {
			return nil
		}
		if err := d.Destroy(); err != nil {
			return fmt.Errorf("power off domain %s: %w", uuid, err)
		}
		return nil
	})
}

// Suspend pauses a running domain's CPUs: it stays on (IsOn) and a
// destroy still powers it off. An off domain is left alone.
func Suspend(conn *libvirt.Connect, uuid string) error {
	return withDomain(conn, uuid, func(d *libvirt.Domain) error {
		if on, _ := d.IsActive(); !on {
			return nil
		}
		if err := d.Suspend(); err != nil {
			return fmt.Errorf("suspend domain %s: %w", uuid, err)
		}
		return nil
	})
}

// IsPaused reports whether a domain is on with its CPUs paused (Suspend).
func IsPaused(conn *libvirt.Connect, uuid string) (bool, error) {
	var paused bool
	err := withDomain(conn, uuid, func(d *libvirt.Domain) error {
		state, _, err := d.GetState()
		paused = state == libvirt.DOMAIN_PAUSED
		return err
	})
	return paused, err
}

// Shutdown asks the guest to power off (ACPI power button).
func Shutdown(conn *libvirt.Connect, uuid string) error {
	return withDomain(conn, uuid, func(d *libvirt.Domain) error {
		if err := d.Shutdown(); err != nil {
			return fmt.Errorf("shut down domain %s: %w", uuid, err)
		}
		return nil
	})
}

// Reboot asks the guest to restart (ACPI).
func Reboot(conn *libvirt.Connect, uuid string) error {
	return withDomain(conn, uuid, func(d *libvirt.Domain) error {
		if err := d.Reboot(libvirt.DOMAIN_REBOOT_ACPI_POWER_BTN); err != nil {
			return fmt.Errorf("reboot domain %s: %w", uuid, err)
		}
		return nil
	})
}

// Reset restarts a domain at once, like a reset button: a new QEMU process,
// so a changed boot order or firmware takes effect.
func Reset(conn *libvirt.Connect, uuid string) error {
	if err := PowerOff(conn, uuid); err != nil {
		return err
	}
	return PowerOn(conn, uuid)
}

// InjectNMI sends a non-maskable interrupt to a running domain.
func InjectNMI(conn *libvirt.Connect, uuid string) error {
	return withDomain(conn, uuid, func(d *libvirt.Domain) error {
		if err := d.InjectNMI(0); err != nil {
			return fmt.Errorf("inject NMI into domain %s: %w", uuid, err)
		}
		return nil
	})
}

// Definition reads the persistent definition of a domain.
func Definition(conn *libvirt.Connect, uuid string) (*libvirtxml.Domain, error) {
	var def libvirtxml.Domain
	err := withDomain(conn, uuid, func(d *libvirt.Domain) error {
		raw, err := d.GetXMLDesc(libvirt.DOMAIN_XML_INACTIVE)
		if err != nil {
			return fmt.Errorf("read definition of %s: %w", uuid, err)
		}
		return def.Unmarshal(raw)
	})
	return &def, err
}

// Redefine replaces a domain's persistent definition; a running domain
// keeps its current hardware until it is next started.
func Redefine(conn *libvirt.Connect, def *libvirtxml.Domain) error {
	raw, err := def.Marshal()
	if err != nil {
		return fmt.Errorf("encode domain %s: %w", def.Name, err)
	}
	dom, err := conn.DomainDefineXML(raw)
	if err != nil {
		return fmt.Errorf("redefine domain %s: %w", def.Name, err)
	}
	return dom.Free()
}

// SetMedia puts an image (or, with path "", nothing) into a domain's
// CD-ROM, read-only, in the persistent definition and, when the domain
// runs, live.
func SetMedia(conn *libvirt.Connect, uuid, path string) error {
	def, err := Definition(conn, uuid)
	if err != nil {
		return err
	}
	cd, err := Cdrom(def)
	if err != nil {
		return err
	}
	cd.Source = nil
	if path != "" {
		cd.Source = &libvirtxml.DomainDiskSource{File: &libvirtxml.DomainDiskSourceFile{File: path}}
	}
	cd.ReadOnly = &libvirtxml.DomainDiskReadOnly{}
	raw, err := cd.Marshal()
	if err != nil {
		return fmt.Errorf("encode CD-ROM of %s: %w", uuid, err)
	}
	return withDomain(conn, uuid, func(d *libvirt.Domain) error {
		flags := libvirt.DOMAIN_DEVICE_MODIFY_CONFIG
		if on, _ := d.IsActive(); on {
			flags |= libvirt.DOMAIN_DEVICE_MODIFY_LIVE
		}
		if err := d.UpdateDeviceFlags(raw, flags|libvirt.DOMAIN_DEVICE_MODIFY_FORCE); err != nil {
			return fmt.Errorf("change media of %s: %w", uuid, err)
		}
		return nil
	})
}

// WriteImage writes a raw disk image onto a powered-off host's disk, in
// place of the deploy agent a real bare-metal provisioner boots to do it.
func WriteImage(conn *libvirt.Connect, h *Host, image string) error {
	if on, err := IsOn(conn, h.UUID); err != nil {
		return err
	} else if on {
		return fmt.Errorf("write image to %s: host is powered on", h.Spec.Name)
	}
	out, err := exec.Command("qemu-img", "convert", "-n", "-f", "raw", "-O", "qcow2", image, h.Disk).CombinedOutput()
	if err != nil {
		return fmt.Errorf("write image to %s: qemu-img: %w: %s", h.Spec.Name, err, out)
	}
	return nil
}
