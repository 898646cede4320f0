package metal3

import (
	"context"
	"errors"
	"fmt"

	bmov1alpha1 "github.com/metal3-io/baremetal-operator/apis/metal3.io/v1alpha1"
	gfredfish "github.com/stmcginnis/gofish/redfish"
	corev1 "k8s.io/api/core/v1"
)

// errNoCustomDeployer explains why a custom deploy cannot run.
var errNoCustomDeployer = errors.New("this lab has no deploy ramdisk steps for spec.customDeploy (metal3.Options.CustomDeployer)")

// errNoPreprovImages explains why a custom deploy has no ramdisk to boot.
var errNoPreprovImages = errors.New("spec.customDeploy boots the deploy ramdisk of the host's PreprovisioningImage, and this operator makes none (metal3.Options.PreprovisioningImages)")

// customDeployOnly: the host asks for a custom deploy and no image, so
// the deploy ramdisk's step does all of the provisioning.
func customDeployOnly(h *bmov1alpha1.BareMetalHost) bool {
	return h.Spec.CustomDeploy != nil && h.Spec.CustomDeploy.Method != "" && (h.Spec.Image == nil || h.Spec.Image.URL == "")
}

// handleCustomDeploy provisions with spec.customDeploy, as Ironic's
// custom-agent deploy does: boot the deploy ramdisk (the host's
// PreprovisioningImage) and run the named deploy step in it; the host is
// provisioned once the step returned. Only the method is recorded in the
// status: there is no image.
func (r *hostReconciler) handleCustomDeploy(ctx context.Context, s *scope) (result, error) {
	h := s.host
	done, err := r.runCustomDeploy(ctx, s, h.Spec.CustomDeploy.Method)
	if err != nil {
		return r.fail(s, bmov1alpha1.ProvisioningError, err.Error()), nil
	}
	if !done {
		return result{after: r.opts.DeployPollInterval}, nil
	}
	if err := r.bootInstance(ctx, s); err != nil {
		return r.fail(s, bmov1alpha1.ProvisioningError, err.Error()), nil
	}
	h.Status.Provisioning.CustomDeploy = h.Spec.CustomDeploy.DeepCopy()
	h.Status.PoweredOn = s.bmc.poweredOn()
	clearError(h)
	s.next, h.Status.ErrorCount = bmov1alpha1.StateProvisioned, 0
	// BMO names the image, which a custom deploy does not have.
	r.event(h, corev1.EventTypeNormal, "ProvisioningComplete", "Image provisioning completed for ")
	return requeueNow, nil
}

// bootInstance ends a deploy as Ironic does once the deploy steps
// returned: the ramdisk is powered off, the virtual media ejected, and
// the host booted from its disk.
func (r *hostReconciler) bootInstance(ctx context.Context, s *scope) error {
	c := s.bmc
	return runSteps(
		func() error { return r.tearDownAgent(ctx, s) },
		c.ejectAll,
		func() error {
			return c.setBoot(s.host.BootMode(), gfredfish.HddBootSourceOverrideTarget, gfredfish.ContinuousBootSourceOverrideEnabled)
		},
		func() error { return c.powerOn(ctx, r.opts.PowerTimeout) },
	)
}

// tearDownAgent powers the ramdisk off as Ironic's agent deploy does
// (deploy_forces_oob_reboot false, its default): the agent powers the
// host off in band, and only a host still on after
// InBandPowerOffTimeout is forced off through the BMC.
func (r *hostReconciler) tearDownAgent(ctx context.Context, s *scope) error {
	if s.bmc.waitPower(ctx, false, "in-band power off", r.opts.InBandPowerOffTimeout) == nil {
		return nil
	}
	s.log.Info("The deploy ramdisk did not power off in band; forcing it off")
	return s.bmc.powerOff(ctx, 0, r.opts.PowerTimeout)
}

// runCustomDeploy boots the ramdisk once (a host whose CD holds it booted
// it) and then asks whether the step finished.
func (r *hostReconciler) runCustomDeploy(ctx context.Context, s *scope, method string) (bool, error) {
	switch {
	case r.opts.CustomDeployer == nil:
		return false, errNoCustomDeployer
	case !r.opts.PreprovisioningImages:
		return false, errNoPreprovImages
	case s.preprov == nil:
		s.log.Info("Waiting for the PreprovisioningImage to boot the deploy ramdisk")
		return false, nil
	case s.preprov.format != bmov1alpha1.ImageFormatISO:
		return false, fmt.Errorf("the lab boots preprovisioning images in format %s only, not %s", bmov1alpha1.ImageFormatISO, s.preprov.format)
	}
	booted, err := s.bmc.cdHolds(s.preprov.url)
	if err != nil {
		return false, err
	}
	if !booted {
		s.log.Info("Booting the deploy ramdisk for a custom deploy", "method", method)
		return false, r.bootLiveISO(ctx, s, s.preprov.url)
	}
	return r.opts.CustomDeployer.DeployStepDone(ctx, deployHost(s), method)
}

// provisioningCancelled: what the host was provisioned with (a custom
// deploy method, an image) is no longer what its spec asks for, as BMO
// decides it.
func provisioningCancelled(h *bmov1alpha1.BareMetalHost) bool {
	spec, done := h.Spec.CustomDeploy, h.Status.Provisioning.CustomDeploy
	if spec != nil && spec.Method != "" {
		if done != nil && done.Method != "" && done.Method != spec.Method {
			return true
		}
		prev := h.Status.Provisioning.Image.URL
		return prev != "" && (h.Spec.Image == nil || h.Spec.Image.URL != prev)
	}
	if done != nil && done.Method != "" {
		return true
	}
	return imageProvisioningCancelled(h)
}

// imageProvisioningCancelled: the image to provision is gone or another
// one.
func imageProvisioningCancelled(h *bmov1alpha1.BareMetalHost) bool {
	img := h.Spec.Image
	switch {
	case img == nil || img.URL == "":
		return true
	case h.Status.Provisioning.Image.URL == "":
		return false
	}
	return img.URL != h.Status.Provisioning.Image.URL
}
