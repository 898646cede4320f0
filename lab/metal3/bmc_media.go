package metal3

import (
	"fmt"
	"slices"

	bmov1alpha1 "github.com/metal3-io/baremetal-operator/apis/metal3.io/v1alpha1"
	gfredfish "github.com/stmcginnis/gofish/redfish"
)

// virtualMedia lists the system's virtual media devices: from the System's
// VirtualMedia link, or else from its Managers' (where Ironic looks).
func (c *bmcConn) virtualMedia() ([]*gfredfish.VirtualMedia, error) {
	media, err := c.system.VirtualMedia()
	if err == nil && len(media) > 0 {
		return media, nil
	}
	managers, merr := c.system.ManagedBy()
	if merr != nil {
		return nil, bmcError("list the managers of system "+c.system.ID, merr)
	}
	for _, m := range managers {
		if mm, err := m.VirtualMedia(); err == nil && len(mm) > 0 {
			return mm, nil
		}
	}
	if err != nil {
		return nil, bmcError("list the virtual media of system "+c.system.ID, err)
	}
	return nil, fmt.Errorf("system %s has no virtual media devices", c.system.ID)
}

// ejectAll empties every device that holds an image, as Ironic does before
// it inserts one.
func (c *bmcConn) ejectAll() error {
	media, err := c.virtualMedia()
	if err != nil {
		return err
	}
	for _, m := range media {
		if !m.Inserted && m.Image == "" {
			continue
		}
		if err := m.EjectMedia(); err != nil {
			return bmcError(fmt.Sprintf("eject %s from device %s of system %s", m.Image, m.ID, c.system.ID), err)
		}
	}
	return nil
}

// insertCD inserts an image into the system's CD (or DVD) device.
func (c *bmcConn) insertCD(image string) error {
	media, err := c.virtualMedia()
	if err != nil {
		return err
	}
	cd := cdDevice(media)
	if cd == nil {
		return fmt.Errorf("system %s has no CD or DVD virtual media device", c.system.ID)
	}
	if err := cd.InsertMedia(image, true, true); err != nil {
		return bmcError(fmt.Sprintf("insert %s into device %s of system %s", image, cd.ID, c.system.ID), err)
	}
	return nil
}

func cdDevice(media []*gfredfish.VirtualMedia) *gfredfish.VirtualMedia {
	for _, m := range media {
		if slices.Contains(m.MediaTypes, gfredfish.CDMediaType) || slices.Contains(m.MediaTypes, gfredfish.DVDMediaType) {
			return m
		}
	}
	return nil
}

// setBoot sets the boot mode when the system's differs (a separate PATCH,
// as Ironic sends it), then the override target and its enablement.
func (c *bmcConn) setBoot(mode bmov1alpha1.BootMode, target gfredfish.BootSourceOverrideTarget, enabled gfredfish.BootSourceOverrideEnabled) error {
	want := redfishBootMode(mode)
	if cur := c.system.Boot.BootSourceOverrideMode; cur != "" && cur != want {
		if err := c.system.SetBoot(gfredfish.Boot{BootSourceOverrideMode: want}); err != nil {
			return bmcError(fmt.Sprintf("set boot mode %s on system %s", want, c.system.ID), err)
		}
	}
	boot := gfredfish.Boot{BootSourceOverrideTarget: target, BootSourceOverrideEnabled: enabled}
	if err := c.system.SetBoot(boot); err != nil {
		return bmcError(fmt.Sprintf("set boot override %s/%s on system %s", target, enabled, c.system.ID), err)
	}
	return c.refresh()
}

// redfishBootMode maps a BareMetalHost boot mode to Redfish.
func redfishBootMode(mode bmov1alpha1.BootMode) gfredfish.BootSourceOverrideMode {
	if mode == bmov1alpha1.Legacy {
		return gfredfish.LegacyBootSourceOverrideMode
	}
	return gfredfish.UEFIBootSourceOverrideMode
}

// cdHolds says whether the CD (or DVD) device holds image.
func (c *bmcConn) cdHolds(image string) (bool, error) {
	media, err := c.virtualMedia()
	if err != nil {
		return false, err
	}
	cd := cdDevice(media)
	return cd != nil && cd.Inserted && cd.Image == image, nil
}
