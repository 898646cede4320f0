package metal3

import (
	"context"
	"errors"
	"fmt"
	"reflect"

	bmov1alpha1 "github.com/metal3-io/baremetal-operator/apis/metal3.io/v1alpha1"
	gfredfish "github.com/stmcginnis/gofish/redfish"
)

// errNoDeployer explains why a host cannot get a disk image.
var errNoDeployer = errors.New("this lab has no Deployer to write disk images or wipe disks (metal3.Options.Deployer)")

// provision boots spec.image: a live ISO from virtual media, or a disk
// image written to the host's disk with its config drive in virtual media.
func (r *hostReconciler) provision(ctx context.Context, s *scope) error {
	img := s.host.Spec.Image
	if img == nil || img.URL == "" {
		return errors.New("spec.customDeploy is not supported by the lab: give spec.image")
	}
	if img.IsLiveISO() {
		return r.bootLiveISO(ctx, s, img.URL)
	}
	return r.deployImage(ctx, s, img)
}

// bootLiveISO is Ironic's virtual-media boot: power off, eject, insert,
// boot Cd once, power on. Later boots go to the disk.
func (r *hostReconciler) bootLiveISO(ctx context.Context, s *scope, url string) error {
	c := s.bmc
	return runSteps(
		func() error { return c.powerOff(ctx, 0, r.opts.PowerTimeout) },
		c.ejectAll,
		func() error { return c.insertCD(url) },
		func() error {
			return c.setBoot(s.host.BootMode(), gfredfish.CdBootSourceOverrideTarget, gfredfish.OnceBootSourceOverrideEnabled)
		},
		func() error { return c.powerOn(ctx, r.opts.PowerTimeout) },
	)
}

// deployImage writes a disk image with the Deployer while the host is
// off, attaches the config drive, and boots the disk.
func (r *hostReconciler) deployImage(ctx context.Context, s *scope, img *bmov1alpha1.Image) error {
	checksum, checksumType, err := img.GetChecksum()
	if err != nil {
		return fmt.Errorf("image %s: %w", img.URL, err)
	}
	if r.opts.Deployer == nil {
		return errNoDeployer
	}
	image := Image{URL: img.URL, Checksum: checksum, ChecksumType: checksumType}
	if img.DiskFormat != nil {
		image.Format = *img.DiskFormat
	}
	c := s.bmc
	return runSteps(
		func() error { return c.powerOff(ctx, 0, r.opts.PowerTimeout) },
		c.ejectAll,
		func() error {
			if err := r.opts.Deployer.WriteImage(ctx, deployHost(s), image); err != nil {
				return fmt.Errorf("write image %s to the disk of system %s: %w", image.URL, c.system.ID, err)
			}
			return nil
		},
		func() error { return r.attachConfigDrive(ctx, s) },
		func() error {
			return c.setBoot(s.host.BootMode(), gfredfish.HddBootSourceOverrideTarget, gfredfish.ContinuousBootSourceOverrideEnabled)
		},
		func() error { return c.powerOn(ctx, r.opts.PowerTimeout) },
	)
}

func (r *hostReconciler) attachConfigDrive(ctx context.Context, s *scope) error {
	url, err := r.configDriveURL(ctx, s)
	if err != nil {
		return err
	}
	return s.bmc.insertCD(url)
}

// deployHost is how the Deployer knows the host.
func deployHost(s *scope) Host {
	h := s.host
	return Host{Namespace: h.Namespace, Name: h.Name, BMCAddress: h.Spec.BMC.Address,
		SystemID: s.bmc.system.ID, BootMACAddress: h.Spec.BootMACAddress}
}

// runSteps runs steps in order and stops at the first error.
func runSteps(steps ...func() error) error {
	for _, step := range steps {
		if err := step(); err != nil {
			return err
		}
	}
	return nil
}

// saveProvisioningSettings copies the settings that do not trigger
// reprovisioning into the status, as BMO's preparing does: the root device
// hints (the lab's hosts have one disk, so they choose nothing). RAID and
// firmware settings are not applied, so not recorded as applied.
func saveProvisioningSettings(h *bmov1alpha1.BareMetalHost) {
	h.Status.Provisioning.RootDeviceHints = h.Spec.RootDeviceHints.DeepCopy()
}

func provisioningSettingsChanged(h *bmov1alpha1.BareMetalHost) bool {
	return !reflect.DeepEqual(h.Spec.RootDeviceHints, h.Status.Provisioning.RootDeviceHints)
}
