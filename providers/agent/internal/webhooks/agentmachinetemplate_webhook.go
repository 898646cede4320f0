package webhooks

import (
	"context"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/validation/field"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	capiagentv1 "github.com/paritylab/paritylab/providers/agent/api/v1beta1"
	"github.com/paritylab/paritylab/providers/internal/specdiff"
)

// +kubebuilder:webhook:verbs=create;update,path=/validate-capi-provider-agent-install-openshift-io-v1beta1-agentmachinetemplate,mutating=false,failurePolicy=fail,matchPolicy=Equivalent,groups=capi-provider.agent-install.openshift.io,resources=agentmachinetemplates,versions=v1beta1,name=validation.agentmachinetemplate.capi-provider.agent-install.openshift.io,sideEffects=None,admissionReviewVersions=v1

// MachineTemplate validates AgentMachineTemplates.
type MachineTemplate struct{}

var _ admission.Validator[*capiagentv1.AgentMachineTemplate] = (*MachineTemplate)(nil)

// SetupWebhookWithManager registers the webhook with the manager's server.
func (w *MachineTemplate) SetupWebhookWithManager(mgr ctrl.Manager) error {
	return ctrl.NewWebhookManagedBy(mgr, &capiagentv1.AgentMachineTemplate{}).WithValidator(w).Complete()
}

// ValidateCreate checks the template's Agent label selector.
func (w *MachineTemplate) ValidateCreate(_ context.Context, t *capiagentv1.AgentMachineTemplate) (admission.Warnings, error) {
	path := field.NewPath("spec", "template", "spec", "agentLabelSelector")
	return nil, invalid("AgentMachineTemplate", t.Name, selector(t.Spec.Template.Spec.AgentLabelSelector, path))
}

// ValidateUpdate refuses any change of the spec: Cluster API requires
// infrastructure machine templates to be immutable, since Machines already
// stamped from a template must stay what it says.
func (w *MachineTemplate) ValidateUpdate(_ context.Context, old, t *capiagentv1.AgentMachineTemplate) (admission.Warnings, error) {
	changed, err := specdiff.Changed(old.Spec, t.Spec)
	if err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	var errs field.ErrorList
	for _, p := range changed {
		errs = append(errs, field.Forbidden(field.NewPath("spec").Child(p),
			"the spec of an AgentMachineTemplate is immutable, as Cluster API requires of infrastructure machine templates: "+
				"the AgentMachines already made from it must keep matching it; to change it, create a new AgentMachineTemplate "+
				"and point the MachineDeployment or MachineSet at it (HyperShift's NodePool controller does so by itself)"))
	}
	return nil, invalid("AgentMachineTemplate", t.Name, errs)
}

// ValidateDelete allows every deletion.
func (w *MachineTemplate) ValidateDelete(context.Context, *capiagentv1.AgentMachineTemplate) (admission.Warnings, error) {
	return nil, nil
}
