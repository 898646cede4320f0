package metal3

import (
	"context"

	bmov1alpha1 "github.com/metal3-io/baremetal-operator/apis/metal3.io/v1alpha1"
	corev1 "k8s.io/api/core/v1"
)

// manageHostPower keeps a host's power as spec.online and the reboot
// annotations say (BMO's manageHostPower):
//
//   - the BMC's power state is copied to status.poweredOn first;
//   - reboot.metal3.io is removed once the host is off, so the power
//     returns: a reboot, once;
//   - reboot.metal3.io/<key> keeps the power off while it is present;
//   - outside the provisioned states, only annotations with "force": true
//     count.
func (r *hostReconciler) manageHostPower(ctx context.Context, s *scope) (result, error) {
	h := s.host
	if actual := s.bmc.poweredOn(); actual != h.Status.PoweredOn {
		s.log.Info("Updating power status", "discovered", actual)
		h.Status.PoweredOn = actual
		clearError(h)
		return requeueNow, nil
	}
	if _, once := h.Annotations[bmov1alpha1.RebootAnnotationPrefix]; once && !h.Status.PoweredOn {
		return requeueNow, r.patchMeta(ctx, h, func() { delete(h.Annotations, bmov1alpha1.RebootAnnotationPrefix) })
	}
	reboot, mode := rebootRequested(h, !s.provisioned())
	desired := h.Spec.Online && !reboot
	if h.Status.PoweredOn == desired {
		if h.Status.ErrorType == bmov1alpha1.PowerManagementError {
			clearError(h) // the power is as asked after all
			h.Status.ErrorCount = 0
		}
		return result{after: r.opts.PollInterval}, nil
	}
	s.log.Info("Power state change needed", "expected", desired, "actual", h.Status.PoweredOn,
		"rebootMode", mode, "reboot", reboot)
	if err := r.setPower(ctx, s, desired, mode); err != nil {
		return r.fail(s, bmov1alpha1.PowerManagementError, err.Error()), nil
	}
	h.Status.PoweredOn = desired
	clearError(h)
	h.Status.ErrorCount = 0
	if desired {
		r.event(h, corev1.EventTypeNormal, "PowerOn", "Host powered on")
	} else {
		r.event(h, corev1.EventTypeNormal, "PowerOff", "Host powered off")
	}
	return requeueNow, nil
}

// setPower powers the host on, or off softly (hard when asked, or after
// an error, as BMO does).
func (r *hostReconciler) setPower(ctx context.Context, s *scope, on bool, mode bmov1alpha1.RebootMode) error {
	if on {
		return s.bmc.powerOn(ctx, r.opts.PowerTimeout)
	}
	soft := r.opts.SoftPowerOffTimeout
	if mode == bmov1alpha1.RebootModeHard || s.host.Status.ErrorCount > 0 {
		soft = 0
	}
	return s.bmc.powerOff(ctx, soft, r.opts.PowerTimeout)
}
