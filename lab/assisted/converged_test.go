package assisted

import (
	"context"
	"strings"
	"testing"
	"time"

	bmov1alpha1 "github.com/metal3-io/baremetal-operator/apis/metal3.io/v1alpha1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/paritylab/paritylab/lab/assisted/agentapi"
	agentv1beta1 "github.com/paritylab/paritylab/providers/thirdparty/agentinstall/v1beta1"
)

// testCooldown stands for upstream's 60 s, long enough to observe.
const testCooldown = 4 * time.Second

func startConvergedHub(t *testing.T) *hub {
	t.Helper()
	return startHubWithOptions(t, Options{Spokes: noSpokes{}, ConvergedFlow: true, ImageCooldown: testCooldown})
}

// preprovImage writes the image the bare-metal operator makes for a
// host: its name and labels, owned by it.
func (h *hub) preprovImage(t *testing.T, bmh *bmov1alpha1.BareMetalHost, arch string, formats ...bmov1alpha1.ImageFormat) *bmov1alpha1.PreprovisioningImage {
	t.Helper()
	img := &bmov1alpha1.PreprovisioningImage{ObjectMeta: metav1.ObjectMeta{Name: bmh.Name, Namespace: bmh.Namespace, Labels: map[string]string{}},
		Spec: bmov1alpha1.PreprovisioningImageSpec{Architecture: arch, AcceptFormats: formats}}
	for k, v := range bmh.Labels {
		img.Labels[k] = v
	}
	if err := controllerutil.SetControllerReference(bmh, img, h.c.Scheme()); err != nil {
		t.Fatal(err)
	}
	if err := h.c.Create(context.Background(), img); err != nil {
		t.Fatal(err)
	}
	return img
}

// imageEvents counts the service's events of an InfraEnv's image builds.
func imageEvents(h *hub, ns, name string) int {
	n := 0
	for _, e := range h.svc.events.list(ns, name, 0) {
		if strings.HasPrefix(e.Message, "Image for InfraEnv") {
			n++
		}
	}
	return n
}

func imageCondition(img *bmov1alpha1.PreprovisioningImage, typ bmov1alpha1.ImageStatusConditionType) *metav1.Condition {
	return meta.FindStatusCondition(img.Status.Conditions, string(typ))
}

// An InfraEnv host's image gets the ironic agent added to the InfraEnv's
// ISO, which rebuilds it, waits out the cooldown from the rebuild, and
// is then the InfraEnv's ISO, ready with the InfraEnv's reason; the
// image is kept out of backups and held by assisted's finalizer.
func TestPreprovImageIsTheInfraEnvISOAfterCooldown(t *testing.T) {
	t.Parallel()
	h := startConvergedHub(t)
	ctx := context.Background()
	ns := h.namespace(t)
	ie := h.infraEnv(t, ns, nil)
	built := ie.Status.CreatedTime.Time
	bmh := h.bmh(t, ns, "ztp-0", "52:54:00:00:50:01", map[string]string{agentv1beta1.InfraEnvNameLabel: ie.Name})
	img := h.preprovImage(t, bmh, "x86_64", bmov1alpha1.ImageFormatISO, bmov1alpha1.ImageFormatInitRD)

	// createdTime has seconds only: the rebuild shows as a second event.
	h.eventually(t, "the InfraEnv's image rebuilt with the ironic agent", func() bool {
		_ = h.c.Get(ctx, client.ObjectKeyFromObject(ie), ie)
		return ie.Annotations[enableIronicAgentAnnotation] == "true" && !ie.Status.CreatedTime.Time.Before(built) &&
			imageEvents(h, ns, ie.Name) >= 2
	})
	if !h.svc.discoveryConfig(string(ie.UID)).IronicAgent {
		t.Fatal("the InfraEnv's discovery config does not carry the ironic agent")
	}
	h.eventually(t, "the image cooling down", func() bool {
		_ = h.c.Get(ctx, client.ObjectKeyFromObject(img), img)
		c := imageCondition(img, bmov1alpha1.ConditionImageReady)
		return c != nil && c.Reason == reasonImageCoolingDown
	})
	if img.Status.ImageUrl != "" || !controllerutil.ContainsFinalizer(img, preprovImageFinalizer) || img.Labels[veleroExcludeLabel] != "true" {
		t.Fatalf("cooling image: url %q finalizers %v labels %v", img.Status.ImageUrl, img.Finalizers, img.Labels)
	}
	h.eventually(t, "the image ready", func() bool {
		_ = h.c.Get(ctx, client.ObjectKeyFromObject(img), img)
		c := imageCondition(img, bmov1alpha1.ConditionImageReady)
		return c != nil && c.Status == metav1.ConditionTrue
	})
	ready := imageCondition(img, bmov1alpha1.ConditionImageReady)
	if ready.Reason != agentv1beta1.ReasonInfraEnvAvailable || ready.ObservedGeneration != img.Generation {
		t.Fatalf("ready condition %+v, want reason %s for generation %d", ready, agentv1beta1.ReasonInfraEnvAvailable, img.Generation)
	}
	if since := ready.LastTransitionTime.Sub(ie.Status.CreatedTime.Time); since < testCooldown-time.Second {
		t.Fatalf("ready %s after the image was built, before the %s cooldown", since, testCooldown)
	}
	st := img.Status
	if st.ImageUrl != ie.Status.ISODownloadURL || st.Format != bmov1alpha1.ImageFormatISO || st.Architecture != "x86_64" {
		t.Fatalf("image status %+v, want the InfraEnv's ISO %s", st, ie.Status.ISODownloadURL)
	}
	if c := imageCondition(img, bmov1alpha1.ConditionImageError); c == nil || c.Status != metav1.ConditionFalse {
		t.Fatalf("error condition %+v", c)
	}
}

// Images the InfraEnv cannot serve are errors that say why; images of
// hosts without an InfraEnv are not assisted's.
func TestPreprovImageErrors(t *testing.T) {
	t.Parallel()
	h := startConvergedHub(t)
	ctx := context.Background()
	ns := h.namespace(t)
	ie := h.infraEnv(t, ns, nil)
	labels := map[string]string{agentv1beta1.InfraEnvNameLabel: ie.Name}
	arm := h.preprovImage(t, h.bmh(t, ns, "arm-0", "52:54:00:00:51:01", labels), "aarch64", bmov1alpha1.ImageFormatISO)
	initrd := h.preprovImage(t, h.bmh(t, ns, "initrd-0", "52:54:00:00:51:02", labels), "x86_64", bmov1alpha1.ImageFormatInitRD)
	other := h.preprovImage(t, h.bmh(t, ns, "capi-0", "52:54:00:00:51:03", nil), "x86_64", bmov1alpha1.ImageFormatISO)
	for img, reason := range map[*bmov1alpha1.PreprovisioningImage]string{arm: reasonArchMismatch, initrd: reasonUnsupportedFormat} {
		h.eventually(t, "image "+img.Name+" failing with "+reason, func() bool {
			_ = h.c.Get(ctx, client.ObjectKeyFromObject(img), img)
			c := imageCondition(img, bmov1alpha1.ConditionImageError)
			return c != nil && c.Status == metav1.ConditionTrue && c.Reason == reason && c.Message != ""
		})
	}
	// The others were reconciled by now; this one is left alone.
	if err := h.c.Get(ctx, client.ObjectKeyFromObject(other), other); err != nil {
		t.Fatal(err)
	}
	if len(other.Finalizers) != 0 || len(other.Status.Conditions) != 0 {
		t.Fatalf("assisted touched the image of a host without InfraEnv: finalizers %v conditions %v", other.Finalizers, other.Status.Conditions)
	}
}

// The converged BMAC gives an InfraEnv host the backup label and its
// finalizer at once, the custom deploy only once the host's image is
// assisted's, and nothing else: no image, no inspection or cleaning
// change. Deleting the host drops the finalizer.
func TestConvergedBMACSetsCustomDeployOnceTheImageIsReady(t *testing.T) {
	t.Parallel()
	h := startConvergedHub(t)
	ctx := context.Background()
	ns := h.namespace(t)
	ie := h.infraEnv(t, ns, nil)
	bmh := h.bmh(t, ns, "ztp-0", "52:54:00:00:52:01", map[string]string{agentv1beta1.InfraEnvNameLabel: ie.Name})
	h.eventually(t, "the host labelled for backup, with the BMAC's finalizer", func() bool {
		_ = h.c.Get(ctx, client.ObjectKeyFromObject(bmh), bmh)
		return bmh.Labels[backupLabel] == "true" && controllerutil.ContainsFinalizer(bmh, bmacFinalizer)
	})
	img := h.preprovImage(t, bmh, "x86_64", bmov1alpha1.ImageFormatISO)
	h.eventually(t, "the image cooling down", func() bool {
		_ = h.c.Get(ctx, client.ObjectKeyFromObject(img), img)
		c := imageCondition(img, bmov1alpha1.ConditionImageReady)
		return c != nil && c.Reason == reasonImageCoolingDown
	})
	if err := h.c.Get(ctx, client.ObjectKeyFromObject(bmh), bmh); err != nil {
		t.Fatal(err)
	}
	if bmh.Spec.CustomDeploy != nil {
		t.Fatalf("custom deploy %+v set before the image was ready", bmh.Spec.CustomDeploy)
	}
	h.eventually(t, "the custom deploy", func() bool {
		_ = h.c.Get(ctx, client.ObjectKeyFromObject(bmh), bmh)
		return bmh.Spec.CustomDeploy != nil
	})
	if bmh.Spec.CustomDeploy.Method != AssistedDeployMethod || bmh.Spec.Image != nil || bmh.Spec.AutomatedCleaningMode != bmov1alpha1.CleaningModeMetadata {
		t.Fatalf("spec %+v: want only customDeploy %s (cleaning as the CRD defaulted it)", bmh.Spec, AssistedDeployMethod)
	}
	if _, ok := bmh.Annotations[inspectAnnotation]; ok {
		t.Fatalf("the converged BMAC wrote %s", inspectAnnotation)
	}
	if err := h.c.Delete(ctx, bmh); err != nil {
		t.Fatal(err)
	}
	h.eventually(t, "the deleted host gone", func() bool {
		return apierrors.IsNotFound(h.c.Get(ctx, client.ObjectKeyFromObject(bmh), bmh))
	})
}

// start_assisted_install is done once the host's agent handed over the
// reboot (Rebooting) and fails when the install failed; other steps are
// not the discovery image's.
func TestAssistedDeployStep(t *testing.T) {
	t.Parallel()
	h := startConvergedHub(t)
	ns := h.namespace(t)
	ie := h.infraEnv(t, ns, nil)
	h.bmh(t, ns, "ztp-0", "52:54:00:00:53:01", map[string]string{agentv1beta1.InfraEnvNameLabel: ie.Name})
	host := "6b8e2c0a-1111-4222-8333-944455553001"
	a := h.registerHost(t, ie, host, "52:54:00:00:53:01", hostInventory(8, 32, 120))
	ctx := context.Background()
	h.eventually(t, "the agent bound to its host", func() bool {
		_ = h.c.Get(ctx, client.ObjectKeyFromObject(a), a)
		return a.Labels[agentv1beta1.BareMetalHostLabel] == "ztp-0"
	})
	done := func() (bool, error) { return h.svc.DeployStepDone(ctx, ns, "ztp-0", AssistedDeployMethod) }
	if ok, err := done(); ok || err != nil {
		t.Fatalf("before any install: done %v, err %v", ok, err)
	}
	if _, err := h.svc.DeployStepDone(ctx, ns, "ztp-0", "install_coreos"); err == nil {
		t.Fatal("an unknown deploy step ran")
	}
	token := h.svc.tokens.forInfraEnv(string(ie.UID))
	progress := func(stage agentv1beta1.HostStage) {
		if code, e := h.agentCall(t, "PUT", agentapi.ProgressPath(string(ie.UID), host), token, agentapi.Progress{CurrentStage: string(stage)}); code/100 != 2 {
			t.Fatalf("progress %s: %d %s", stage, code, e.Reason)
		}
	}
	progress(agentv1beta1.HostStageRebooting)
	h.eventually(t, "the step done at Rebooting", func() bool { ok, err := done(); return ok && err == nil })
}

// The non-converged BMAC boots the InfraEnv's ISO as a live ISO on an
// available host, with inspection and cleaning disabled, once the image
// cooled down.
func TestNonConvergedBMACSetsTheLiveISOAfterCooldown(t *testing.T) {
	t.Parallel()
	h := startHubWithOptions(t, Options{Spokes: noSpokes{}, ImageCooldown: testCooldown})
	ctx := context.Background()
	ns := h.namespace(t)
	ie := h.infraEnv(t, ns, nil)
	bmh := h.bmh(t, ns, "ztp-0", "52:54:00:00:54:01", map[string]string{agentv1beta1.InfraEnvNameLabel: ie.Name})
	// As the bare-metal operator would; the BMAC writes the host too.
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if err := h.c.Get(ctx, client.ObjectKeyFromObject(bmh), bmh); err != nil {
			return err
		}
		bmh.Status.Provisioning.State = bmov1alpha1.StateAvailable
		return h.c.Status().Update(ctx, bmh)
	})
	if err != nil {
		t.Fatal(err)
	}
	h.eventually(t, "the live ISO", func() bool {
		_ = h.c.Get(ctx, client.ObjectKeyFromObject(bmh), bmh)
		return bmh.Spec.Image != nil
	})
	if since := time.Since(ie.Status.CreatedTime.Time); since < testCooldown-time.Second {
		t.Fatalf("the live ISO was set %s after the image was built, before the %s cooldown", since, testCooldown)
	}
	if bmh.Spec.Image.URL != ie.Status.ISODownloadURL || !bmh.Spec.Image.IsLiveISO() || !bmh.Spec.Online ||
		bmh.Spec.AutomatedCleaningMode != bmov1alpha1.CleaningModeDisabled || bmh.Annotations[inspectAnnotation] != "disabled" {
		t.Fatalf("spec %+v annotations %v: want the InfraEnv's live ISO, online, cleaning and inspection disabled", bmh.Spec, bmh.Annotations)
	}
	if bmh.Spec.CustomDeploy != nil || !controllerutil.ContainsFinalizer(bmh, bmacFinalizer) {
		t.Fatalf("custom deploy %+v, finalizers %v", bmh.Spec.CustomDeploy, bmh.Finalizers)
	}
}
