package webhooks

import (
	"context"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	capiagentv1 "github.com/paritylab/paritylab/providers/agent/api/v1beta1"
)

// +kubebuilder:webhook:verbs=create;update,path=/validate-capi-provider-agent-install-openshift-io-v1beta1-agentmachine,mutating=false,failurePolicy=fail,matchPolicy=Equivalent,groups=capi-provider.agent-install.openshift.io,resources=agentmachines,versions=v1beta1,name=validation.agentmachine.capi-provider.agent-install.openshift.io,sideEffects=None,admissionReviewVersions=v1

// Machine validates AgentMachines.
type Machine struct{}

var _ admission.Validator[*capiagentv1.AgentMachine] = (*Machine)(nil)

// SetupWebhookWithManager registers the webhook with the manager's server.
func (w *Machine) SetupWebhookWithManager(mgr ctrl.Manager) error {
	return ctrl.NewWebhookManagedBy(mgr, &capiagentv1.AgentMachine{}).WithValidator(w).Complete()
}

// ValidateCreate checks the Agent label selector.
func (w *Machine) ValidateCreate(_ context.Context, m *capiagentv1.AgentMachine) (admission.Warnings, error) {
	return nil, invalid("AgentMachine", m.Name, selector(m.Spec.AgentLabelSelector, field.NewPath("spec", "agentLabelSelector")))
}

// ValidateUpdate checks the Agent label selector when it changed.
func (w *Machine) ValidateUpdate(_ context.Context, old, m *capiagentv1.AgentMachine) (admission.Warnings, error) {
	if equality.Semantic.DeepEqual(old.Spec.AgentLabelSelector, m.Spec.AgentLabelSelector) {
		return nil, nil
	}
	return nil, invalid("AgentMachine", m.Name, selector(m.Spec.AgentLabelSelector, field.NewPath("spec", "agentLabelSelector")))
}

// ValidateDelete allows every deletion.
func (w *Machine) ValidateDelete(context.Context, *capiagentv1.AgentMachine) (admission.Warnings, error) {
	return nil, nil
}

// selectorHint says what a valid agentLabelSelector looks like.
const selectorHint = "agentLabelSelector picks the Agents a machine may be bound to and must be a Kubernetes label selector: " +
	"matchLabels of valid label keys and values, matchExpressions with operator In or NotIn and a list of values, " +
	"or Exists or DoesNotExist and no values"

// selector checks an Agent label selector as the API machinery would when
// the controller lists Agents with it; nil selects every Agent.
func selector(s *metav1.LabelSelector, path *field.Path) field.ErrorList {
	errs := metav1validation.ValidateLabelSelector(s, metav1validation.LabelSelectorValidationOptions{}, path)
	for _, e := range errs {
		e.Detail += " (" + selectorHint + ")"
	}
	if len(errs) > 0 {
		return errs
	}
	if _, err := metav1.LabelSelectorAsSelector(s); err != nil {
		return field.ErrorList{field.Invalid(path, s, err.Error()+" ("+selectorHint+")")}
	}
	return nil
}

// invalid is the Invalid error of a kind of this API, or nil without errs.
func invalid(kind, name string, errs field.ErrorList) error {
	if len(errs) == 0 {
		return nil
	}
	return apierrors.NewInvalid(capiagentv1.GroupVersion.WithKind(kind).GroupKind(), name, errs)
}
