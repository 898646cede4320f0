package assisted

import (
	"context"
	"fmt"
	"slices"
	"time"

	bmov1alpha1 "github.com/metal3-io/baremetal-operator/apis/metal3.io/v1alpha1"
	conditionsv1 "github.com/openshift/custom-resource-status/conditions/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	agentv1beta1 "github.com/paritylab/paritylab/providers/thirdparty/agentinstall/v1beta1"
)

// Metadata of the converged flow's PreprovisioningImages and InfraEnvs.
const (
	preprovImageFinalizer = "preprovisioningimage.agent-install.openshift.io/ai-deprovision"
	// veleroExcludeLabel keeps the images out of the hub's backup: they
	// are rebuilt from their hosts.
	veleroExcludeLabel = "velero.io/exclude-from-backup"
	// enableIronicAgentAnnotation marks an InfraEnv whose image carries
	// the ironic agent.
	enableIronicAgentAnnotation = "infraenv.agent-install.openshift.io/enable-ironic-agent"
	// rebootAnnotation asks the bare-metal operator to reboot a host.
	rebootAnnotation = "reboot.metal3.io"
)

// PreprovisioningImage condition reasons, as assisted-service sets them.
const (
	reasonUnsupportedFormat   = "UnsupportedImageFormat"
	reasonInfraEnvUnavailable = "InfraEnvNotAvailable"
	reasonArchMismatch        = "InfraEnvArchMismatch"
	reasonImageNotCreated     = "WaitingForInfraEnvImageToBeCreated"
	reasonImageCoolingDown    = "WaitingForInfraEnvImageToCoolDown"
)

func (s *Service) setupPreprovImageController(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).Named("assisted-preprovisioningimage").
		For(&bmov1alpha1.PreprovisioningImage{}).
		Watches(&agentv1beta1.InfraEnv{}, handler.EnqueueRequestsFromMapFunc(s.imagesOfInfraEnv)).
		Complete(reconcile.Func(s.reconcilePreprovImage))
}

func (s *Service) imagesOfInfraEnv(ctx context.Context, obj client.Object) []reconcile.Request {
	return s.labelledWithInfraEnv(ctx, obj, &bmov1alpha1.PreprovisioningImageList{})
}

// reconcilePreprovImage is assisted-service's PreprovisioningImage
// controller (converged flow): the image of a host labelled with an
// InfraEnv is that InfraEnv's discovery ISO with the ironic agent added,
// once the ISO has cooled down for ImageCooldown after it was built, so
// that hosts do not boot an image about to be replaced. Images of other
// hosts are left to the hub's image-customization controller.
func (s *Service) reconcilePreprovImage(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	img := &bmov1alpha1.PreprovisioningImage{}
	if err := s.client.Get(ctx, req.NamespacedName, img); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	ieName, ok := img.Labels[agentv1beta1.InfraEnvNameLabel]
	if !ok {
		return ctrl.Result{}, nil
	}
	if !img.DeletionTimestamp.IsZero() {
		return ctrl.Result{}, s.releasePreprovImage(ctx, img)
	}
	if done, err := s.adoptPreprovImage(ctx, img); done || err != nil {
		return ctrl.Result{}, err
	}
	ie := &agentv1beta1.InfraEnv{}
	if err := s.client.Get(ctx, client.ObjectKey{Namespace: img.Namespace, Name: ieName}, ie); client.IgnoreNotFound(err) != nil {
		return ctrl.Result{}, err
	} else if err != nil || !ie.DeletionTimestamp.IsZero() {
		return ctrl.Result{}, s.setImageWaiting(ctx, img, reasonInfraEnvUnavailable,
			fmt.Sprintf("InfraEnv %s/%s is not found or is being deleted", img.Namespace, ieName), false)
	}
	return s.answerPreprovImage(ctx, img, ie)
}

// answerPreprovImage checks the image's spec against the InfraEnv, adds
// the ironic agent, and publishes the ISO once it cooled down.
func (s *Service) answerPreprovImage(ctx context.Context, img *bmov1alpha1.PreprovisioningImage, ie *agentv1beta1.InfraEnv) (ctrl.Result, error) {
	if !slices.Contains(img.Spec.AcceptFormats, bmov1alpha1.ImageFormatISO) {
		// Upstream also serves initrd images (kernel and rootfs from the
		// image service); the lab's guests boot ISOs only.
		return ctrl.Result{}, s.setImageWaiting(ctx, img, reasonUnsupportedFormat,
			fmt.Sprintf("Unsupported image format: the lab's InfraEnvs serve %s only, the image accepts %v", bmov1alpha1.ImageFormatISO, img.Spec.AcceptFormats), true)
	}
	if imgArch, ieArch := normalizeArch(img.Spec.Architecture), normalizeArch(ie.Spec.CPUArchitecture); imgArch != ieArch {
		return ctrl.Result{}, s.setImageWaiting(ctx, img, reasonArchMismatch,
			fmt.Sprintf("PreprovisioningImage CPU architecture (%s) does not match InfraEnv CPU architecture (%s)", imgArch, ieArch), true)
	}
	if added, err := s.addIronicAgent(ctx, ie); added || err != nil {
		// The InfraEnv's image is rebuilt; its update brings us back.
		return ctrl.Result{}, err
	}
	if ie.Status.CreatedTime == nil {
		return ctrl.Result{}, s.setImageWaiting(ctx, img, reasonImageNotCreated, "Waiting for InfraEnv image to be created", false)
	}
	if wait := time.Until(ie.Status.CreatedTime.Add(s.opts.ImageCooldown)); wait > 0 {
		return ctrl.Result{RequeueAfter: wait}, s.setImageWaiting(ctx, img, reasonImageCoolingDown, "Waiting for InfraEnv image to cool down", false)
	}
	return ctrl.Result{}, s.publishPreprovImage(ctx, img, ie)
}

// adoptPreprovImage puts the finalizer and the backup exclusion on the
// image; done says the image was updated (its update brings us back).
func (s *Service) adoptPreprovImage(ctx context.Context, img *bmov1alpha1.PreprovisioningImage) (bool, error) {
	if controllerutil.ContainsFinalizer(img, preprovImageFinalizer) && img.Labels[veleroExcludeLabel] == "true" {
		return false, nil
	}
	controllerutil.AddFinalizer(img, preprovImageFinalizer)
	img.Labels[veleroExcludeLabel] = "true"
	if err := s.client.Update(ctx, img); err != nil {
		return false, fmt.Errorf("adopt PreprovisioningImage %s: %w", img.Name, err)
	}
	return true, nil
}

// releasePreprovImage removes the finalizer once the host no longer
// needs the image: its host is gone, has cleaning disabled, or is being
// deleted past deprovisioning (cleaning boots the image).
func (s *Service) releasePreprovImage(ctx context.Context, img *bmov1alpha1.PreprovisioningImage) error {
	if !controllerutil.ContainsFinalizer(img, preprovImageFinalizer) {
		return nil
	}
	bmh := &bmov1alpha1.BareMetalHost{}
	err := s.client.Get(ctx, client.ObjectKey{Namespace: img.Namespace, Name: hostOfImage(img)}, bmh)
	switch {
	case client.IgnoreNotFound(err) != nil:
		return err
	case err == nil && bmh.Spec.AutomatedCleaningMode != bmov1alpha1.CleaningModeDisabled &&
		!slices.Contains([]bmov1alpha1.ProvisioningState{bmov1alpha1.StatePoweringOffBeforeDelete, bmov1alpha1.StateDeleting}, bmh.Status.Provisioning.State):
		return nil // the host's watch of its image brings it back
	}
	controllerutil.RemoveFinalizer(img, preprovImageFinalizer)
	return s.client.Update(ctx, img)
}

// hostOfImage names the BareMetalHost owning the image.
func hostOfImage(img *bmov1alpha1.PreprovisioningImage) string {
	for _, o := range img.OwnerReferences {
		if o.Kind == "BareMetalHost" {
			return o.Name
		}
	}
	return img.Name
}

// addIronicAgent adds the ironic agent to the InfraEnv's image, which
// rebuilds it, and marks the InfraEnv; added says it was not there yet.
func (s *Service) addIronicAgent(ctx context.Context, ie *agentv1beta1.InfraEnv) (bool, error) {
	_, had := s.ironicAgent.LoadOrStore(string(ie.UID), true)
	if ie.Annotations[enableIronicAgentAnnotation] != "true" {
		patch := client.MergeFrom(ie.DeepCopy())
		metav1.SetMetaDataAnnotation(&ie.ObjectMeta, enableIronicAgentAnnotation, "true")
		if err := s.client.Patch(ctx, ie, patch); err != nil {
			return !had, fmt.Errorf("mark InfraEnv %s for the ironic agent: %w", ie.Name, err)
		}
	}
	return !had, nil
}

// publishPreprovImage gives the image the InfraEnv's ISO, ready as the
// InfraEnv's image is, and reboots a host not provisioned yet whose
// image changed, so that it boots the new one.
func (s *Service) publishPreprovImage(ctx context.Context, img *bmov1alpha1.PreprovisioningImage, ie *agentv1beta1.InfraEnv) error {
	changed := img.Status.ImageUrl != "" && img.Status.ImageUrl != ie.Status.ISODownloadURL
	err := s.patchImageStatus(ctx, img, func(st *bmov1alpha1.PreprovisioningImageStatus) {
		st.ImageUrl, st.Format, st.Architecture = ie.Status.ISODownloadURL, bmov1alpha1.ImageFormatISO, ie.Spec.CPUArchitecture
		st.KernelUrl, st.ExtraKernelParams = "", ""
		created := conditionsv1.FindStatusCondition(ie.Status.Conditions, agentv1beta1.ConditionImageCreated)
		ready, failed, reason, msg := metav1.ConditionFalse, metav1.ConditionFalse, agentv1beta1.ReasonImageCreated, ""
		if created != nil {
			ready, reason, msg = metav1.ConditionStatus(created.Status), created.Reason, created.Message
			if created.Reason == agentv1beta1.ReasonImageCreationError {
				failed = metav1.ConditionTrue
			}
		}
		setImageConditions(st, img.Generation, ready, failed, reason, msg)
	})
	if err != nil || !changed {
		return err
	}
	return s.rebootForNewImage(ctx, img)
}

func (s *Service) rebootForNewImage(ctx context.Context, img *bmov1alpha1.PreprovisioningImage) error {
	bmh := &bmov1alpha1.BareMetalHost{}
	if err := s.client.Get(ctx, client.ObjectKey{Namespace: img.Namespace, Name: hostOfImage(img)}, bmh); err != nil {
		return fmt.Errorf("host of PreprovisioningImage %s: %w", img.Name, err)
	}
	if bmh.Status.Provisioning.State == bmov1alpha1.StateProvisioned {
		return nil
	}
	patch := client.MergeFrom(bmh.DeepCopy())
	metav1.SetMetaDataAnnotation(&bmh.ObjectMeta, rebootAnnotation, `{"force": true}`)
	if err := s.client.Patch(ctx, bmh, patch); err != nil {
		return fmt.Errorf("reboot BareMetalHost %s for its new image: %w", bmh.Name, err)
	}
	return nil
}

// setImageWaiting clears the image and says why it is not ready; failed
// says the reason is an error of the image.
func (s *Service) setImageWaiting(ctx context.Context, img *bmov1alpha1.PreprovisioningImage, reason, msg string, failed bool) error {
	errStatus := metav1.ConditionFalse
	if failed {
		errStatus = metav1.ConditionTrue
	}
	return s.patchImageStatus(ctx, img, func(st *bmov1alpha1.PreprovisioningImageStatus) {
		st.ImageUrl, st.KernelUrl, st.ExtraKernelParams, st.Format, st.Architecture = "", "", "", "", ""
		setImageConditions(st, img.Generation, metav1.ConditionFalse, errStatus, reason, msg)
	})
}

func setImageConditions(st *bmov1alpha1.PreprovisioningImageStatus, gen int64, ready, failed metav1.ConditionStatus, reason, msg string) {
	for typ, status := range map[bmov1alpha1.ImageStatusConditionType]metav1.ConditionStatus{
		bmov1alpha1.ConditionImageReady: ready, bmov1alpha1.ConditionImageError: failed,
	} {
		meta.SetStatusCondition(&st.Conditions, metav1.Condition{Type: string(typ), Status: status,
			ObservedGeneration: gen, Reason: reason, Message: msg})
	}
}

// patchImageStatus writes the status change, if any.
func (s *Service) patchImageStatus(ctx context.Context, img *bmov1alpha1.PreprovisioningImage, change func(*bmov1alpha1.PreprovisioningImageStatus)) error {
	before := img.DeepCopy()
	change(&img.Status)
	if equality.Semantic.DeepEqual(before.Status, img.Status) {
		return nil
	}
	if err := s.client.Status().Patch(ctx, img, client.MergeFrom(before)); err != nil {
		return fmt.Errorf("update PreprovisioningImage %s status: %w", img.Name, err)
	}
	return nil
}

// normalizeArch names an architecture as assisted-service compares them.
func normalizeArch(arch string) string {
	switch arch {
	case "", "amd64", "x86-64":
		return "x86_64"
	case "aarch64":
		return "arm64"
	}
	return arch
}
