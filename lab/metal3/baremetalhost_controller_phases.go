package metal3

import (
	"context"

	bmov1alpha1 "github.com/metal3-io/baremetal-operator/apis/metal3.io/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
)

// stateHandler runs one provisioning state; it sets s.next to move on.
type stateHandler func(context.Context, *scope) (result, error)

func (r *hostReconciler) handlers() map[bmov1alpha1.ProvisioningState]stateHandler {
	return map[bmov1alpha1.ProvisioningState]stateHandler{
		bmov1alpha1.StateNone:                    r.handleNone,
		bmov1alpha1.StateUnmanaged:               r.handleUnmanaged,
		bmov1alpha1.StateRegistering:             r.handleRegistering,
		bmov1alpha1.StateInspecting:              r.handleInspecting,
		bmov1alpha1.StateMatchProfile:            r.handleMatchProfile,
		bmov1alpha1.StatePreparing:               r.handlePreparing,
		bmov1alpha1.StateAvailable:               r.handleAvailable,
		bmov1alpha1.StateReady:                   r.handleAvailable,
		bmov1alpha1.StateProvisioning:            r.handleProvisioning,
		bmov1alpha1.StateProvisioned:             r.handleProvisioned,
		bmov1alpha1.StateExternallyProvisioned:   r.handleExternallyProvisioned,
		bmov1alpha1.StateDeprovisioning:          r.handleDeprovisioning,
		bmov1alpha1.StatePoweringOffBeforeDelete: r.handlePoweringOffBeforeDelete,
		bmov1alpha1.StateDeleting:                r.handleDeleting,
	}
}

// handleNone: a new host registers, or is unmanaged without BMC details.
func (r *hostReconciler) handleNone(_ context.Context, s *scope) (result, error) {
	if s.host.HasBMCDetails() {
		s.next = bmov1alpha1.StateRegistering
		return requeueNow, nil
	}
	r.event(s.host, corev1.EventTypeNormal, "Discovered", "Discovered host with no BMC details")
	s.host.SetOperationalStatus(bmov1alpha1.OperationalStatusDiscovered)
	s.next = bmov1alpha1.StateUnmanaged
	return requeueNow, nil
}

// handleUnmanaged waits for BMC details (a spec change wakes it).
func (r *hostReconciler) handleUnmanaged(_ context.Context, s *scope) (result, error) {
	if !s.host.HasBMCDetails() {
		return idle, nil
	}
	s.next = bmov1alpha1.StateRegistering
	return requeueNow, nil
}

// handleRegistering runs once ensureRegistered succeeded.
func (r *hostReconciler) handleRegistering(_ context.Context, s *scope) (result, error) {
	h := s.host
	switch {
	case h.Spec.ExternallyProvisioned:
		s.next = bmov1alpha1.StateExternallyProvisioned
	case inspectionDisabled(h):
		s.next = bmov1alpha1.StatePreparing
	default:
		s.next = bmov1alpha1.StateInspecting
	}
	h.Status.ErrorCount = 0
	return requeueNow, nil
}

// handleInspecting fills status.hardware from the BMC.
func (r *hostReconciler) handleInspecting(ctx context.Context, s *scope) (result, error) {
	h := s.host
	if inspectionDisabled(h) {
		r.event(h, corev1.EventTypeNormal, "InspectionSkipped", "disabled by annotation")
		s.next, h.Status.ErrorCount = bmov1alpha1.StatePreparing, 0
		return requeueNow, nil
	}
	if inspectionRequested(h) {
		// The request is taken: drop it, as BMO does once inspection starts.
		return requeueNow, r.patchMeta(ctx, h, func() { delete(h.Annotations, bmov1alpha1.InspectAnnotationPrefix) })
	}
	hw, err := s.bmc.inspect(h.Spec.BootMACAddress)
	if err != nil {
		return r.fail(s, bmov1alpha1.InspectionError, err.Error()), nil
	}
	h.Status.HardwareDetails = hw
	clearError(h)
	s.next, h.Status.ErrorCount = bmov1alpha1.StatePreparing, 0
	return requeueNow, nil
}

// handleMatchProfile is a state of older BMOs: move on.
func (r *hostReconciler) handleMatchProfile(_ context.Context, s *scope) (result, error) {
	s.next, s.host.Status.ErrorCount = bmov1alpha1.StatePreparing, 0
	return requeueNow, nil
}

// handlePreparing records the provisioning settings; the lab applies no
// RAID or firmware settings, so there is nothing more to prepare.
func (r *hostReconciler) handlePreparing(_ context.Context, s *scope) (result, error) {
	saveProvisioningSettings(s.host)
	clearError(s.host)
	s.next, s.host.Status.ErrorCount = bmov1alpha1.StateAvailable, 0
	return requeueNow, nil
}

// handleAvailable waits for an image, keeping the power as spec.online
// says.
func (r *hostReconciler) handleAvailable(ctx context.Context, s *scope) (result, error) {
	h := s.host
	switch {
	case h.Spec.ExternallyProvisioned:
		s.next = bmov1alpha1.StateExternallyProvisioned
	case inspectionRequested(h):
		s.next = bmov1alpha1.StateInspecting
	case provisioningSettingsChanged(h):
		s.next = bmov1alpha1.StatePreparing
	case h.NeedsProvisioning():
		clearError(h)
		s.next = bmov1alpha1.StateProvisioning
	default:
		return r.manageHostPower(ctx, s)
	}
	return requeueNow, nil
}

// handleProvisioning boots the image; an error, or a changed image, sends
// the host to deprovisioning first, as in BMO.
func (r *hostReconciler) handleProvisioning(ctx context.Context, s *scope) (result, error) {
	h := s.host
	if h.Status.ErrorType != "" || provisioningCancelled(h) {
		s.next = bmov1alpha1.StateDeprovisioning
		return requeueNow, nil
	}
	if err := r.clearRebootAnnotations(ctx, h); err != nil {
		return idle, err
	}
	if customDeployOnly(h) {
		return r.handleCustomDeploy(ctx, s)
	}
	if err := r.provision(ctx, s); err != nil {
		return r.fail(s, bmov1alpha1.ProvisioningError, err.Error()), nil
	}
	h.Status.Provisioning.Image = *h.Spec.Image.DeepCopy()
	h.Status.PoweredOn = s.bmc.poweredOn()
	clearError(h)
	s.next, h.Status.ErrorCount = bmov1alpha1.StateProvisioned, 0
	r.event(h, corev1.EventTypeNormal, "ProvisioningComplete", "Image provisioning completed for "+h.Spec.Image.URL)
	return requeueNow, nil
}

// handleProvisioned keeps a provisioned host's power as asked.
func (r *hostReconciler) handleProvisioned(ctx context.Context, s *scope) (result, error) {
	if provisioningCancelled(s.host) {
		s.next = bmov1alpha1.StateDeprovisioning
		return requeueNow, nil
	}
	return r.manageHostPower(ctx, s)
}

// handleExternallyProvisioned manages power only, until the host is no
// longer externally provisioned.
func (r *hostReconciler) handleExternallyProvisioned(ctx context.Context, s *scope) (result, error) {
	h := s.host
	if h.Spec.ExternallyProvisioned {
		return r.manageHostPower(ctx, s)
	}
	if h.NeedsHardwareInspection() && !inspectionDisabled(h) {
		s.next = bmov1alpha1.StateInspecting
	} else {
		s.next = bmov1alpha1.StatePreparing
	}
	return requeueNow, nil
}

// handleDeprovisioning powers off, ejects and cleans; then the host is
// available, or on its way out when deleted.
func (r *hostReconciler) handleDeprovisioning(ctx context.Context, s *scope) (result, error) {
	h := s.host
	if s.bmc == nil { // deleted without credentials: nothing can be done
		s.next = bmov1alpha1.StateDeleting
		return requeueNow, nil
	}
	if err := r.deprovision(ctx, s); err != nil {
		res := r.fail(s, bmov1alpha1.ProvisioningError, err.Error())
		if s.deleting() && h.Status.ErrorCount > 3 {
			s.log.Info("Giving up on host clean up after 3 attempts; the host may still run its image")
			s.next = bmov1alpha1.StatePoweringOffBeforeDelete
			return requeueNow, nil
		}
		return res, nil
	}
	if err := r.clearRebootAnnotations(ctx, h); err != nil {
		return idle, err
	}
	h.Status.Provisioning.Image = bmov1alpha1.Image{}
	h.Status.Provisioning.CustomDeploy = nil
	clearProvisioningSettings(h)
	h.Status.PoweredOn = false
	r.media.release(h.UID)
	clearError(h)
	h.Status.ErrorCount = 0
	s.next = bmov1alpha1.StateAvailable
	if s.deleting() {
		s.next = bmov1alpha1.StatePoweringOffBeforeDelete
	}
	r.event(h, corev1.EventTypeNormal, "DeprovisioningComplete", "Image deprovisioning completed")
	return requeueNow, nil
}

// handlePoweringOffBeforeDelete powers a deleted host off.
func (r *hostReconciler) handlePoweringOffBeforeDelete(ctx context.Context, s *scope) (result, error) {
	h := s.host
	if s.bmc == nil {
		s.next = bmov1alpha1.StateDeleting
		return requeueNow, nil
	}
	if err := s.bmc.powerOff(ctx, 0, r.opts.PowerTimeout); err != nil {
		res := r.fail(s, bmov1alpha1.PowerManagementError, err.Error())
		if h.Status.ErrorCount > 3 {
			s.log.Info("Giving up on host power off after 3 attempts")
			s.next = bmov1alpha1.StateDeleting
			return requeueNow, nil
		}
		return res, nil
	}
	h.Status.PoweredOn = false
	s.next, h.Status.ErrorCount = bmov1alpha1.StateDeleting, 0
	return requeueNow, nil
}

// handleDeleting lets the host go.
func (r *hostReconciler) handleDeleting(ctx context.Context, s *scope) (result, error) {
	h := s.host
	r.media.release(h.UID)
	err := r.patchMeta(ctx, h, func() { controllerutil.RemoveFinalizer(h, bmov1alpha1.BareMetalHostFinalizer) })
	if err == nil {
		s.gone = true
		s.log.Info("Cleanup is complete, removed finalizer")
	}
	return idle, err
}

// checkDetached: a detached host (in a state that may be detached) is
// left alone, with operational status detached; once the annotation is
// gone it is managed again.
func (r *hostReconciler) checkDetached(s *scope) (result, bool) {
	h := s.host
	if detached(h) {
		switch h.Status.Provisioning.State {
		case bmov1alpha1.StateProvisioned, bmov1alpha1.StateExternallyProvisioned, bmov1alpha1.StateReady, bmov1alpha1.StateAvailable:
			if h.SetOperationalStatus(bmov1alpha1.OperationalStatusDetached) {
				s.log.Info("Host is detached: no more power or media changes")
			}
			return result{after: detachedPoll}, true
		}
	}
	if h.OperationalStatus() == bmov1alpha1.OperationalStatusDetached {
		status := bmov1alpha1.OperationalStatusOK
		if h.Status.ErrorType != "" {
			status = bmov1alpha1.OperationalStatusError
		}
		h.SetOperationalStatus(status)
		s.log.Info("Removed detached status: the host is managed again")
		return requeueNow, true
	}
	return idle, false
}
