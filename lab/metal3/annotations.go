package metal3

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	bmov1alpha1 "github.com/metal3-io/baremetal-operator/apis/metal3.io/v1alpha1"
	corev1 "k8s.io/api/core/v1"
)

// detachedPoll is how often a detached host is looked at (BMO's
// unmanagedRetryDelay); removing the annotation triggers a reconcile.
const detachedPoll = 10 * time.Minute

// inspectionDisabled: inspect.metal3.io: disabled.
func inspectionDisabled(h *bmov1alpha1.BareMetalHost) bool {
	return h.Annotations[bmov1alpha1.InspectAnnotationPrefix] == bmov1alpha1.InspectAnnotationValueDisabled
}

// inspectionRequested: inspect.metal3.io with any other value asks for a
// (new) inspection.
func inspectionRequested(h *bmov1alpha1.BareMetalHost) bool {
	v, ok := h.Annotations[bmov1alpha1.InspectAnnotationPrefix]
	return ok && v != bmov1alpha1.InspectAnnotationValueDisabled
}

func detached(h *bmov1alpha1.BareMetalHost) bool {
	_, ok := h.Annotations[bmov1alpha1.DetachedAnnotation]
	return ok
}

// isRebootAnnotation: reboot.metal3.io or reboot.metal3.io/<key>.
func isRebootAnnotation(key string) bool {
	return key == bmov1alpha1.RebootAnnotationPrefix || strings.HasPrefix(key, bmov1alpha1.RebootAnnotationPrefix+"/")
}

// rebootRequested says whether a reboot annotation asks for the power to
// go off, and how (hard if any annotation says so). Outside the
// provisioned states only annotations with "force": true count, as in BMO.
func rebootRequested(h *bmov1alpha1.BareMetalHost, expectForce bool) (bool, bmov1alpha1.RebootMode) {
	requested, mode := false, bmov1alpha1.RebootModeSoft
	for key, value := range h.Annotations {
		if !isRebootAnnotation(key) {
			continue
		}
		args := rebootArguments(value)
		if expectForce && !args.Force {
			continue
		}
		requested = true
		if args.Mode == bmov1alpha1.RebootModeHard {
			mode = bmov1alpha1.RebootModeHard
		}
	}
	return requested, mode
}

// rebootArguments parses a reboot annotation's value; empty or invalid
// means a soft reboot.
func rebootArguments(value string) bmov1alpha1.RebootAnnotationArguments {
	args := bmov1alpha1.RebootAnnotationArguments{Mode: bmov1alpha1.RebootModeSoft}
	if value != "" && json.Unmarshal([]byte(value), &args) != nil {
		args = bmov1alpha1.RebootAnnotationArguments{Mode: bmov1alpha1.RebootModeSoft}
	}
	return args
}

// clearRebootAnnotations removes every reboot annotation, as BMO does when
// it (de)provisions.
func (r *hostReconciler) clearRebootAnnotations(ctx context.Context, h *bmov1alpha1.BareMetalHost) error {
	var keys []string
	for key := range h.Annotations {
		if isRebootAnnotation(key) {
			keys = append(keys, key)
		}
	}
	if len(keys) == 0 {
		return nil
	}
	return r.patchMeta(ctx, h, func() {
		for _, k := range keys {
			delete(h.Annotations, k)
		}
	})
}

// consumeHardwareDetails takes inspect.metal3.io/hardwaredetails into
// status.hardware when the host has none or inspection is disabled, then
// removes the annotation (BMO's updateHardwareDetails). An annotation that
// does not parse stays, with a warning event.
func (r *hostReconciler) consumeHardwareDetails(ctx context.Context, h *bmov1alpha1.BareMetalHost) (bool, error) {
	raw, ok := h.Annotations[bmov1alpha1.HardwareDetailsAnnotation]
	if !ok {
		return false, nil
	}
	if h.Status.HardwareDetails == nil || inspectionDisabled(h) {
		hw := &bmov1alpha1.HardwareDetails{}
		dec := json.NewDecoder(strings.NewReader(raw))
		dec.DisallowUnknownFields()
		if err := dec.Decode(hw); err != nil {
			r.event(h, corev1.EventTypeWarning, "InvalidAnnotationValue", "cannot parse "+bmov1alpha1.HardwareDetailsAnnotation+": "+err.Error())
			return false, nil
		}
		h.Status.HardwareDetails = hw
		if err := r.saveStatus(ctx, h); err != nil {
			return false, err
		}
		r.event(h, corev1.EventTypeNormal, "UpdateHardwareDetails", "Set HardwareDetails from annotation")
	}
	return true, r.patchMeta(ctx, h, func() { delete(h.Annotations, bmov1alpha1.HardwareDetailsAnnotation) })
}

// restoreStatus is BMO's status cache: a host without a status (never
// saved: no lastUpdated) takes the one in baremetalhost.metal3.io/status,
// as assisted-service writes installed hosts and as the BMAC saves a
// host it pauses; a host that has a status drops the annotation, whose
// copy would only grow stale. A cache that does not parse is ignored,
// with a warning event, and the host starts from nothing. It says
// whether it wrote anything.
func (r *hostReconciler) restoreStatus(ctx context.Context, h *bmov1alpha1.BareMetalHost) (bool, error) {
	raw, ok := h.Annotations[bmov1alpha1.StatusAnnotation]
	if !ok {
		return false, nil
	}
	if !h.Status.LastUpdated.IsZero() {
		return true, r.patchMeta(ctx, h, func() { delete(h.Annotations, bmov1alpha1.StatusAnnotation) })
	}
	cached := bmov1alpha1.BareMetalHostStatus{}
	if err := json.Unmarshal([]byte(raw), &cached); err != nil {
		r.event(h, corev1.EventTypeWarning, "InvalidAnnotationValue", "cannot parse "+bmov1alpha1.StatusAnnotation+": "+err.Error())
		return false, nil
	}
	h.Status = cached
	if err := r.saveStatus(ctx, h); err != nil {
		return false, fmt.Errorf("restore status of BareMetalHost %s from its annotation: %w", h.Name, err)
	}
	return true, nil
}
