package metal3

import (
	"context"
	"fmt"

	bmov1alpha1 "github.com/metal3-io/baremetal-operator/apis/metal3.io/v1alpha1"
)

// deprovision powers off, ejects and, with automatedCleaningMode metadata
// (the default), has the Deployer wipe the disk's metadata.
func (r *hostReconciler) deprovision(ctx context.Context, s *scope) error {
	c := s.bmc
	if err := runSteps(func() error { return c.powerOff(ctx, 0, r.opts.PowerTimeout) }, c.ejectAll); err != nil {
		return err
	}
	if s.host.Spec.AutomatedCleaningMode == bmov1alpha1.CleaningModeDisabled {
		return nil
	}
	if r.opts.Deployer == nil {
		return fmt.Errorf("automatedCleaningMode metadata: %w; set automatedCleaningMode: disabled to skip cleaning", errNoDeployer)
	}
	if err := r.opts.Deployer.WipeDisk(ctx, deployHost(s)); err != nil {
		return fmt.Errorf("clean the disk metadata of system %s: %w", c.system.ID, err)
	}
	return nil
}

// clearProvisioningSettings forgets the settings of the last provisioning.
func clearProvisioningSettings(h *bmov1alpha1.BareMetalHost) {
	h.Status.Provisioning.RootDeviceHints = nil
	h.Status.Provisioning.RAID = nil
	h.Status.Provisioning.Firmware = nil
}
