package webhooks

import (
	"context"
	"net/url"

	"k8s.io/apimachinery/pkg/util/validation/field"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	capiagentv1 "github.com/paritylab/paritylab/providers/agent/api/v1beta1"
)

// +kubebuilder:webhook:verbs=create;update,path=/validate-capi-provider-agent-install-openshift-io-v1beta1-agentcluster,mutating=false,failurePolicy=fail,matchPolicy=Equivalent,groups=capi-provider.agent-install.openshift.io,resources=agentclusters,versions=v1beta1,name=validation.agentcluster.capi-provider.agent-install.openshift.io,sideEffects=None,admissionReviewVersions=v1

// Cluster validates AgentClusters.
type Cluster struct{}

var _ admission.Validator[*capiagentv1.AgentCluster] = (*Cluster)(nil)

// SetupWebhookWithManager registers the webhook with the manager's server.
func (w *Cluster) SetupWebhookWithManager(mgr ctrl.Manager) error {
	return ctrl.NewWebhookManagedBy(mgr, &capiagentv1.AgentCluster{}).WithValidator(w).Complete()
}

// ValidateCreate checks the Ignition endpoint's URL.
func (w *Cluster) ValidateCreate(_ context.Context, c *capiagentv1.AgentCluster) (admission.Warnings, error) {
	return nil, invalid("AgentCluster", c.Name, ignitionURL(ignitionEndpointURL(c)))
}

// ValidateUpdate checks the Ignition endpoint's URL when it changed.
func (w *Cluster) ValidateUpdate(_ context.Context, old, c *capiagentv1.AgentCluster) (admission.Warnings, error) {
	if ignitionEndpointURL(old) == ignitionEndpointURL(c) {
		return nil, nil
	}
	return nil, invalid("AgentCluster", c.Name, ignitionURL(ignitionEndpointURL(c)))
}

// ValidateDelete allows every deletion.
func (w *Cluster) ValidateDelete(context.Context, *capiagentv1.AgentCluster) (admission.Warnings, error) {
	return nil, nil
}

func ignitionEndpointURL(c *capiagentv1.AgentCluster) string {
	if c.Spec.IgnitionEndpoint == nil {
		return ""
	}
	return c.Spec.IgnitionEndpoint.Url
}

// ignitionURL checks that an Ignition endpoint URL, when set, is one hosts
// can fetch from: the provider hands it to assisted-service without its
// path, and assisted-service appends the machine config pool.
func ignitionURL(raw string) field.ErrorList {
	if raw == "" {
		return nil
	}
	u, err := url.Parse(raw)
	if err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != "" && u.Opaque == "" {
		return nil
	}
	return field.ErrorList{field.Invalid(field.NewPath("spec", "ignitionEndpoint", "url"), raw,
		"must be an absolute http or https URL of the Ignition server, such as https://ignition.example.com/ignition; "+
			"leave it empty for the Ignition assisted-service serves")}
}
