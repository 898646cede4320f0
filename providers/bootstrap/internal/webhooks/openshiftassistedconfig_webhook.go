package webhooks

import (
	"context"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/validation/field"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	bootstrapv1 "github.com/paritylab/paritylab/providers/bootstrap/api/v1alpha2"
	"github.com/paritylab/paritylab/providers/internal/specdiff"
	"github.com/paritylab/paritylab/providers/internal/validation"
)

// +kubebuilder:webhook:verbs=create;update,path=/validate-bootstrap-cluster-x-k8s-io-v1alpha2-openshiftassistedconfig,mutating=false,failurePolicy=fail,matchPolicy=Equivalent,groups=bootstrap.cluster.x-k8s.io,resources=openshiftassistedconfigs,versions=v1alpha2,name=validation.openshiftassistedconfig.bootstrap.cluster.x-k8s.io,sideEffects=None,admissionReviewVersions=v1

// Config validates OpenshiftAssistedConfigs.
type Config struct{}

var _ admission.Validator[*bootstrapv1.OpenshiftAssistedConfig] = (*Config)(nil)

// SetupWebhookWithManager registers the webhook with the manager's server.
func (w *Config) SetupWebhookWithManager(mgr ctrl.Manager) error {
	return ctrl.NewWebhookManagedBy(mgr, &bootstrapv1.OpenshiftAssistedConfig{}).WithValidator(w).Complete()
}

// ValidateCreate checks every value of the spec.
func (w *Config) ValidateCreate(_ context.Context, c *bootstrapv1.OpenshiftAssistedConfig) (admission.Warnings, error) {
	return warnings(&c.Spec, "spec"), invalid(c.Name, validation.ConfigSpec(&c.Spec, field.NewPath("spec")))
}

// warnings are about values that are valid but have no effect.
func warnings(spec *bootstrapv1.OpenshiftAssistedConfigSpec, path string) admission.Warnings {
	if spec.OSImageVersion == "" {
		return nil
	}
	return admission.Warnings{path + ".osImageVersion is ignored: the Machine's InfraEnv is bound to the cluster, whose OpenShift release picks the discovery OS image"}
}

// ValidateUpdate refuses any change of the spec.
func (w *Config) ValidateUpdate(_ context.Context, old, c *bootstrapv1.OpenshiftAssistedConfig) (admission.Warnings, error) {
	changed, err := specdiff.Changed(old.Spec, c.Spec)
	if err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	var errs field.ErrorList
	for _, p := range changed {
		errs = append(errs, field.Forbidden(field.NewPath("spec").Child(p),
			"the spec of an OpenshiftAssistedConfig is immutable: it was rendered into the Machine's InfraEnv and bootstrap data; "+
				"to change it, change the OpenshiftAssistedConfigTemplate (or the control plane's openshiftAssistedConfigSpec) and let new Machines get new configs"))
	}
	return nil, invalid(c.Name, errs)
}

// ValidateDelete allows every deletion.
func (w *Config) ValidateDelete(context.Context, *bootstrapv1.OpenshiftAssistedConfig) (admission.Warnings, error) {
	return nil, nil
}

func invalid(name string, errs field.ErrorList) error {
	if len(errs) == 0 {
		return nil
	}
	return apierrors.NewInvalid(bootstrapv1.GroupVersion.WithKind("OpenshiftAssistedConfig").GroupKind(), name, errs)
}
