package metal3

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	bmov1alpha1 "github.com/metal3-io/baremetal-operator/apis/metal3.io/v1alpha1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
)

// preprovImageRetryDelay is how long a host that needs its
// PreprovisioningImage waits before looking again, as in BMO; the
// PreprovisioningImage's own changes wake it sooner.
const preprovImageRetryDelay = 5 * time.Minute

// defaultArchitecture is the architecture BMO asks for when neither the
// host's spec nor its inspection names one.
const defaultArchitecture = "x86_64"

// preprovImage is a PreprovisioningImage ready to boot.
type preprovImage struct {
	url    string
	format bmov1alpha1.ImageFormat
}

// ensurePreprovImage is what BMO built with --build-preprov-image does in
// registerHost (Options.PreprovisioningImages): in the states that boot
// the deploy ramdisk it keeps a PreprovisioningImage of the host's name,
// labels and architecture, owned by the host, and takes its image once
// another controller made it ready. Inspecting and preparing hosts wait
// for it; a PreprovisioningImage reporting an error is a registration
// error of the host. It reports whether the state handler may run.
func (r *hostReconciler) ensurePreprovImage(ctx context.Context, s *scope) (result, bool, error) {
	if !r.opts.PreprovisioningImages || !needsPreprovImage(s.host) {
		return idle, true, nil
	}
	img, err := r.syncPreprovImage(ctx, s)
	if buildErr := (preprovImageError{}); errors.As(err, &buildErr) {
		return r.fail(s, bmov1alpha1.RegistrationError, buildErr.message), false, nil
	} else if err != nil {
		return idle, false, err
	}
	s.preprov = img
	switch s.next {
	case bmov1alpha1.StateInspecting, bmov1alpha1.StatePreparing:
		if img == nil {
			s.log.Info("Waiting for the PreprovisioningImage to be ready")
			return result{after: preprovImageRetryDelay}, false, nil
		}
	}
	return idle, true, nil
}

// needsPreprovImage: the states in which BMO keeps a PreprovisioningImage
// (not while registering, externally provisioned, deleted, or
// deprovisioning without cleaning).
func needsPreprovImage(h *bmov1alpha1.BareMetalHost) bool {
	switch h.Status.Provisioning.State {
	case bmov1alpha1.StateNone, bmov1alpha1.StateUnmanaged, bmov1alpha1.StateRegistering,
		bmov1alpha1.StateExternallyProvisioned, bmov1alpha1.StateDeleting, bmov1alpha1.StatePoweringOffBeforeDelete:
		return false
	case bmov1alpha1.StateDeprovisioning:
		return h.Spec.AutomatedCleaningMode != bmov1alpha1.CleaningModeDisabled
	}
	return true
}

// syncPreprovImage creates or updates the host's PreprovisioningImage and
// returns its image when ready (nil on the reconcile that wrote it).
func (r *hostReconciler) syncPreprovImage(ctx context.Context, s *scope) (*preprovImage, error) {
	h := s.host
	want := bmov1alpha1.PreprovisioningImageSpec{
		NetworkDataName: h.Spec.PreprovisioningNetworkDataName,
		Architecture:    hostArchitecture(h),
		AcceptFormats:   acceptFormats(s.address),
	}
	ppi := &bmov1alpha1.PreprovisioningImage{}
	err := r.client.Get(ctx, client.ObjectKeyFromObject(h), ppi)
	if apierrors.IsNotFound(err) {
		return nil, r.createPreprovImage(ctx, h, want)
	}
	if err != nil {
		return nil, fmt.Errorf("get PreprovisioningImage %s: %w", h.Name, err)
	}
	if updated, err := r.updatePreprovImage(ctx, h, ppi, want); updated || err != nil {
		return nil, err
	}
	return preprovImageReady(ppi)
}

func (r *hostReconciler) createPreprovImage(ctx context.Context, h *bmov1alpha1.BareMetalHost, spec bmov1alpha1.PreprovisioningImageSpec) error {
	ppi := &bmov1alpha1.PreprovisioningImage{
		ObjectMeta: metav1.ObjectMeta{Name: h.Name, Namespace: h.Namespace, Labels: maps.Clone(h.Labels)},
		Spec:       spec,
	}
	if err := controllerutil.SetControllerReference(h, ppi, r.client.Scheme()); err != nil {
		return fmt.Errorf("own PreprovisioningImage %s: %w", h.Name, err)
	}
	if err := r.client.Create(ctx, ppi); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("create PreprovisioningImage %s: %w", h.Name, err)
	}
	return nil
}

// updatePreprovImage adds the host's labels (a label removed from the host
// stays on the image, as in BMO) and sets the spec; it reports whether it
// wrote anything.
func (r *hostReconciler) updatePreprovImage(ctx context.Context, h *bmov1alpha1.BareMetalHost, ppi *bmov1alpha1.PreprovisioningImage, spec bmov1alpha1.PreprovisioningImageSpec) (bool, error) {
	changed := false
	for k, v := range h.Labels {
		if cur, ok := ppi.Labels[k]; !ok || cur != v {
			if ppi.Labels == nil {
				ppi.Labels = map[string]string{}
			}
			ppi.Labels[k] = v
			changed = true
		}
	}
	if !equality.Semantic.DeepEqual(ppi.Spec, spec) {
		ppi.Spec = spec
		changed = true
	}
	if !changed {
		return false, nil
	}
	if err := r.client.Update(ctx, ppi); err != nil {
		return false, fmt.Errorf("update PreprovisioningImage %s: %w", ppi.Name, err)
	}
	return true, nil
}

// preprovImageError is a PreprovisioningImage that reports it cannot be
// built.
type preprovImageError struct{ message string }

func (e preprovImageError) Error() string { return e.message }

// preprovImageReady is the image of a PreprovisioningImage whose status
// answers its current spec and generation, nil while it does not, or its
// Error condition's message.
func preprovImageReady(ppi *bmov1alpha1.PreprovisioningImage) (*preprovImage, error) {
	st := ppi.Status
	if st.Architecture != ppi.Spec.Architecture || !slices.Contains(ppi.Spec.AcceptFormats, st.Format) {
		return nil, nil
	}
	if st.NetworkData.Name != ppi.Spec.NetworkDataName {
		return nil, nil
	}
	if c := meta.FindStatusCondition(st.Conditions, string(bmov1alpha1.ConditionImageError)); c != nil && c.Status == metav1.ConditionTrue {
		return nil, preprovImageError{message: c.Message}
	}
	ready := meta.FindStatusCondition(st.Conditions, string(bmov1alpha1.ConditionImageReady))
	if ready == nil || ready.Status != metav1.ConditionTrue || ready.ObservedGeneration != ppi.Generation || st.ImageUrl == "" {
		return nil, nil
	}
	return &preprovImage{url: st.ImageUrl, format: st.Format}, nil
}

// hostArchitecture: the spec's, else the inspected CPU's, else x86_64.
func hostArchitecture(h *bmov1alpha1.BareMetalHost) string {
	if h.Spec.Architecture != "" {
		return h.Spec.Architecture
	}
	if h.Status.HardwareDetails != nil && h.Status.HardwareDetails.CPU.Arch != "" {
		return h.Status.HardwareDetails.CPU.Arch
	}
	return defaultArchitecture
}

// acceptFormats: a virtual-media driver boots an ISO or a kernel and
// initrd; the others only the latter, as BMO asks of Ironic's drivers.
func acceptFormats(addr bmcAddress) []bmov1alpha1.ImageFormat {
	if addr.driver == "redfish-virtualmedia" {
		return []bmov1alpha1.ImageFormat{bmov1alpha1.ImageFormatISO, bmov1alpha1.ImageFormatInitRD}
	}
	return []bmov1alpha1.ImageFormat{bmov1alpha1.ImageFormatInitRD}
}
