package metal3

import (
	"math/rand/v2"
	"time"

	bmov1alpha1 "github.com/metal3-io/baremetal-operator/apis/metal3.io/v1alpha1"
	corev1 "k8s.io/api/core/v1"
)

// errorReasons are the event reasons BMO gives each error type.
var errorReasons = map[bmov1alpha1.ErrorType]string{
	bmov1alpha1.ProvisionedRegistrationError: "ProvisionedRegistrationError",
	bmov1alpha1.RegistrationError:            "RegistrationError",
	bmov1alpha1.InspectionError:              "InspectionError",
	bmov1alpha1.PreparationError:             "PreparationError",
	bmov1alpha1.ProvisioningError:            "ProvisioningError",
	bmov1alpha1.PowerManagementError:         "PowerManagementError",
}

// fail records a failed action on the host (BMO's recordActionFailure):
// operational status error, error type and message, one more error, an
// event; the action is retried after a backoff that grows with the count.
func (r *hostReconciler) fail(s *scope, errType bmov1alpha1.ErrorType, message string) result {
	h := s.host
	h.Status.OperationalStatus = bmov1alpha1.OperationalStatusError
	h.Status.ErrorType = errType
	h.Status.ErrorMessage = message
	h.Status.ErrorCount++
	s.log.Info("Host action failed", "errorType", errType, "errorCount", h.Status.ErrorCount, "message", message)
	r.event(h, corev1.EventTypeWarning, errorReasons[errType], message)
	return result{after: r.backoff(h.Status.ErrorCount)}
}

// clearError removes any error, leaving the error count (BMO's
// clearError). It reports whether anything changed.
func clearError(h *bmov1alpha1.BareMetalHost) bool {
	dirty := h.SetOperationalStatus(bmov1alpha1.OperationalStatusOK)
	if h.Status.ErrorType != "" || h.Status.ErrorMessage != "" {
		h.Status.ErrorType, h.Status.ErrorMessage = "", ""
		dirty = true
	}
	return dirty
}

// backoff is ErrorBackoff * 2^(n-1), less up to half of it at random,
// capped at MaxErrorBackoff.
func (r *hostReconciler) backoff(errorCount int) time.Duration {
	d := r.opts.ErrorBackoff
	for i := 1; i < errorCount && d < r.opts.MaxErrorBackoff; i++ {
		d *= 2
	}
	d = min(d, r.opts.MaxErrorBackoff)
	return d - time.Duration(rand.Int64N(int64(d)/2+1)) //nolint:gosec // jitter
}

// event publishes an event on the host.
func (r *hostReconciler) event(h *bmov1alpha1.BareMetalHost, eventType, reason, message string) {
	if r.recorder != nil && reason != "" {
		r.recorder.Event(h, eventType, reason, message)
	}
}
