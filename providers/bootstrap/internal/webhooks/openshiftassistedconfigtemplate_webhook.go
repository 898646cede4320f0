package webhooks

import (
	"context"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/validation/field"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	bootstrapv1 "github.com/paritylab/paritylab/providers/bootstrap/api/v1alpha2"
	"github.com/paritylab/paritylab/providers/internal/validation"
)

// +kubebuilder:webhook:verbs=create;update,path=/validate-bootstrap-cluster-x-k8s-io-v1alpha2-openshiftassistedconfigtemplate,mutating=false,failurePolicy=fail,matchPolicy=Equivalent,groups=bootstrap.cluster.x-k8s.io,resources=openshiftassistedconfigtemplates,versions=v1alpha2,name=validation.openshiftassistedconfigtemplate.bootstrap.cluster.x-k8s.io,sideEffects=None,admissionReviewVersions=v1

// ConfigTemplate validates OpenshiftAssistedConfigTemplates. Templates may
// change: configs already stamped from them keep their spec.
type ConfigTemplate struct{}

var _ admission.Validator[*bootstrapv1.OpenshiftAssistedConfigTemplate] = (*ConfigTemplate)(nil)

// SetupWebhookWithManager registers the webhook with the manager's server.
func (w *ConfigTemplate) SetupWebhookWithManager(mgr ctrl.Manager) error {
	return ctrl.NewWebhookManagedBy(mgr, &bootstrapv1.OpenshiftAssistedConfigTemplate{}).WithValidator(w).Complete()
}

// ValidateCreate checks every value of the template's spec.
func (w *ConfigTemplate) ValidateCreate(_ context.Context, t *bootstrapv1.OpenshiftAssistedConfigTemplate) (admission.Warnings, error) {
	return warnings(&t.Spec.Template.Spec, "spec.template.spec"), w.validate(t)
}

// ValidateUpdate checks every value of the template's new spec.
func (w *ConfigTemplate) ValidateUpdate(_ context.Context, _, t *bootstrapv1.OpenshiftAssistedConfigTemplate) (admission.Warnings, error) {
	return warnings(&t.Spec.Template.Spec, "spec.template.spec"), w.validate(t)
}

// ValidateDelete allows every deletion.
func (w *ConfigTemplate) ValidateDelete(context.Context, *bootstrapv1.OpenshiftAssistedConfigTemplate) (admission.Warnings, error) {
	return nil, nil
}

func (w *ConfigTemplate) validate(t *bootstrapv1.OpenshiftAssistedConfigTemplate) error {
	errs := validation.ConfigSpec(&t.Spec.Template.Spec, field.NewPath("spec", "template", "spec"))
	if len(errs) == 0 {
		return nil
	}
	return apierrors.NewInvalid(bootstrapv1.GroupVersion.WithKind("OpenshiftAssistedConfigTemplate").GroupKind(), t.Name, errs)
}
