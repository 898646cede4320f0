package metal3

import (
	"encoding/json"

	"github.com/go-logr/logr"
	bmov1alpha1 "github.com/metal3-io/baremetal-operator/apis/metal3.io/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// scope is one reconcile of one host.
type scope struct {
	host *bmov1alpha1.BareMetalHost
	log  logr.Logger
	// next is the provisioning state to move to; the current one by
	// default.
	next bmov1alpha1.ProvisioningState
	// secret, creds and address are the host's BMC access, when they
	// could be read (a host being deleted may have none).
	secret  *corev1.Secret
	creds   credentials
	address bmcAddress
	// bmc is connected once registration is confirmed.
	bmc *bmcConn
	// preprov is the host's ready PreprovisioningImage, when the operator
	// uses them (Options.PreprovisioningImages) and one is ready.
	preprov *preprovImage
	// gone is set once the finalizer is removed: the host may no longer
	// exist.
	gone bool
}

func newScope(host *bmov1alpha1.BareMetalHost, log logr.Logger) *scope {
	return &scope{host: host, log: log, next: host.Status.Provisioning.State}
}

func (s *scope) deleting() bool { return !s.host.DeletionTimestamp.IsZero() }

// provisioned says whether the host runs an image (ours or someone
// else's): the states in which normal reboots apply.
func (s *scope) provisioned() bool {
	st := s.host.Status.Provisioning.State
	return st == bmov1alpha1.StateProvisioned || st == bmov1alpha1.StateExternallyProvisioned
}

// checkInitiateDelete moves a deleted host towards deletion, as BMO does:
// provisioned hosts deprovision first (unless detached), other registered
// hosts power off first, unregistered ones go straight to deleting. It
// reports whether it changed the state.
func (s *scope) checkInitiateDelete() bool {
	if !s.deleting() {
		return false
	}
	h := s.host
	switch s.next {
	case bmov1alpha1.StateRegistering, bmov1alpha1.StateUnmanaged, bmov1alpha1.StateNone:
		s.next = bmov1alpha1.StateDeleting
	case bmov1alpha1.StateProvisioning, bmov1alpha1.StateProvisioned:
		if h.OperationalStatus() == bmov1alpha1.OperationalStatusDetached {
			if delayDetachedDelete(h) {
				return false // until the host is attached again
			}
			s.next = bmov1alpha1.StateDeleting // a detached host is not touched
		} else {
			s.next = bmov1alpha1.StateDeprovisioning
		}
	case bmov1alpha1.StateDeprovisioning, bmov1alpha1.StatePoweringOffBeforeDelete:
		if h.Status.ErrorType != bmov1alpha1.RegistrationError || h.Status.ErrorCount <= 3 {
			return false
		}
		s.next = bmov1alpha1.StateDeleting // the BMC is gone for good
	case bmov1alpha1.StateDeleting:
		return false
	default:
		s.next = bmov1alpha1.StatePoweringOffBeforeDelete
	}
	return true
}

// delayDetachedDelete: a detached host whose annotation says
// {"deleteAction":"delay"} (or that lost the annotation but is still
// detached) is deprovisioned on delete once it is attached again, as in
// BMO.
func delayDetachedDelete(h *bmov1alpha1.BareMetalHost) bool {
	val, present := h.Annotations[bmov1alpha1.DetachedAnnotation]
	if !present {
		return true
	}
	var args bmov1alpha1.DetachedAnnotationArguments
	if json.Unmarshal([]byte(val), &args) != nil {
		return false
	}
	return args.DeleteAction == bmov1alpha1.DetachedDeleteActionDelay
}

// transition records the move from initial to s.next in the status, with
// the operation history BMO keeps.
func (r *hostReconciler) transition(s *scope, initial bmov1alpha1.ProvisioningState) {
	if s.next == initial || s.gone {
		return
	}
	h := s.host
	now := metav1.Now()
	if m := h.OperationMetricForState(initial); m != nil && !m.Start.IsZero() && m.End.IsZero() {
		m.End = now
	}
	if m := h.OperationMetricForState(s.next); m != nil && (m.Start.IsZero() || !m.End.IsZero()) {
		*m = bmov1alpha1.OperationMetric{Start: now}
	}
	h.Status.Provisioning.State = s.next
	switch s.next {
	case bmov1alpha1.StateRegistering, bmov1alpha1.StateInspecting, bmov1alpha1.StateProvisioning:
		h.Status.Provisioning.BootMode = h.BootMode()
	}
	s.log.Info("Changing provisioning state", "old", initial, "new", s.next)
	r.stateEvent(h, s.next)
}

// stateEvent publishes the events BMO publishes when (de)provisioning
// starts.
func (r *hostReconciler) stateEvent(h *bmov1alpha1.BareMetalHost, state bmov1alpha1.ProvisioningState) {
	switch state {
	case bmov1alpha1.StateProvisioning:
		switch {
		case h.Spec.Image != nil:
			r.event(h, corev1.EventTypeNormal, "ProvisioningStarted", "Image provisioning started for "+h.Spec.Image.URL)
		case customDeployOnly(h): // BMO names the image a custom deploy does not have
			r.event(h, corev1.EventTypeNormal, "ProvisioningStarted", "Image provisioning started for ")
		}
	case bmov1alpha1.StateDeprovisioning:
		r.event(h, corev1.EventTypeNormal, "DeprovisioningStarted", "Image deprovisioning started")
	}
}
