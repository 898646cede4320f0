package metal3

import (
	"context"

	bmov1alpha1 "github.com/metal3-io/baremetal-operator/apis/metal3.io/v1alpha1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/paritylab/paritylab/lab/controllers"
	"github.com/paritylab/paritylab/lab/crds"
)

// ImageCustomization answers PreprovisioningImages with the deploy
// ramdisk, as BMO's PreprovisioningImage controller does with its image
// provider (on OpenShift, the image-customization controller, which
// builds the ironic-python-agent ISO). The lab's deploy ramdisk is its
// Deployer, which works on hosts from outside, so ISOURL only names it:
// nothing boots it, and an image whose host does boot its ramdisk (a
// custom deploy) comes from another controller, whose images Leave
// tells apart.
type ImageCustomization struct {
	// ISOURL is the image every answered PreprovisioningImage gets.
	ISOURL string
	// Leave tells the images another controller answers (on OpenShift,
	// assisted-service answers those labelled with an InfraEnv).
	Leave func(*bmov1alpha1.PreprovisioningImage) bool
}

var _ controllers.Component = (*ImageCustomization)(nil)

func (*ImageCustomization) Name() string                                          { return "image-customization" }
func (*ImageCustomization) AddToScheme(s *runtime.Scheme) error                   { return bmov1alpha1.AddToScheme(s) }
func (*ImageCustomization) CRDs() []crds.Set                                      { return nil }
func (*ImageCustomization) Webhooks() (*controllers.WebhookConfigurations, error) { return nil, nil }
func (*ImageCustomization) WebhooksReady(context.Context, client.Client) error    { return nil }

// SetupWithManager implements controllers.Component.
func (p *ImageCustomization) SetupWithManager(_ context.Context, mgr ctrl.Manager) error {
	c := mgr.GetClient()
	return ctrl.NewControllerManagedBy(mgr).Named("image-customization").
		For(&bmov1alpha1.PreprovisioningImage{}).
		Complete(reconcile.Func(func(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
			ppi := &bmov1alpha1.PreprovisioningImage{}
			if err := c.Get(ctx, req.NamespacedName, ppi); err != nil {
				return ctrl.Result{}, client.IgnoreNotFound(err)
			}
			if (p.Leave != nil && p.Leave(ppi)) || !ppi.DeletionTimestamp.IsZero() || imageAnswered(ppi, p.ISOURL) {
				return ctrl.Result{}, nil
			}
			setImageReady(ppi, p.ISOURL)
			return ctrl.Result{}, c.Status().Update(ctx, ppi)
		}))
}

// imageAnswered: the image holds the ISO for its current spec.
func imageAnswered(ppi *bmov1alpha1.PreprovisioningImage, url string) bool {
	ready := meta.FindStatusCondition(ppi.Status.Conditions, string(bmov1alpha1.ConditionImageReady))
	return ready != nil && ready.Status == metav1.ConditionTrue && ready.ObservedGeneration == ppi.Generation &&
		ppi.Status.ImageUrl == url && ppi.Status.Architecture == ppi.Spec.Architecture
}

// setImageReady is the provider's answer: the ISO, for the spec's
// architecture and generation, with BMO's reason.
func setImageReady(ppi *bmov1alpha1.PreprovisioningImage, url string) {
	ppi.Status.ImageUrl, ppi.Status.Format, ppi.Status.Architecture = url, bmov1alpha1.ImageFormatISO, ppi.Spec.Architecture
	setImageConditions(ppi, metav1.ConditionTrue, metav1.ConditionFalse, "ImageSuccess", "Generated image")
}

func setImageConditions(ppi *bmov1alpha1.PreprovisioningImage, ready, failed metav1.ConditionStatus, reason, msg string) {
	for typ, st := range map[bmov1alpha1.ImageStatusConditionType]metav1.ConditionStatus{
		bmov1alpha1.ConditionImageReady: ready, bmov1alpha1.ConditionImageError: failed,
	} {
		meta.SetStatusCondition(&ppi.Status.Conditions, metav1.Condition{Type: string(typ), Status: st,
			Reason: reason, Message: msg, ObservedGeneration: ppi.Generation})
	}
}
