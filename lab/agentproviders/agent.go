package agentproviders

import (
	"context"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/paritylab/paritylab/lab/controllers"
	"github.com/paritylab/paritylab/lab/crds"
	"github.com/paritylab/paritylab/providers/agent"
	capiagentv1 "github.com/paritylab/paritylab/providers/agent/api/v1beta1"
	"github.com/paritylab/paritylab/providers/config"
)

// Agent is the agent infrastructure provider component. New leaves it out:
// the lab's CAPOA flows do not run it; the conformance suite does.
type Agent struct {
	opts agent.Options
}

var _ controllers.Component = (*Agent)(nil)

// NewAgent returns the agent infrastructure provider component.
func NewAgent(opts agent.Options) *Agent { return &Agent{opts: opts} }

// Name implements controllers.Component.
func (*Agent) Name() string { return "capi-agent" }

// AddToScheme implements controllers.Component.
func (*Agent) AddToScheme(s *runtime.Scheme) error { return agent.AddToScheme(s) }

// CRDs implements controllers.Component: AgentCluster, AgentMachine and
// AgentMachineTemplate, with their v1beta1 contract label.
func (*Agent) CRDs() []crds.Set { return []crds.Set{AgentCRDs()} }

// AgentCRDs are the agent provider's CRDs, which HyperShift's install
// also brings (lab/hypershift installs them with the HostedCluster's).
func AgentCRDs() crds.Set { return set(config.Agent()) }

// Webhooks implements controllers.Component.
func (a *Agent) Webhooks() (*controllers.WebhookConfigurations, error) {
	if a.opts.SkipWebhooks {
		return nil, nil
	}
	return webhooks(config.Agent())
}

// SetupWithManager implements controllers.Component.
func (a *Agent) SetupWithManager(ctx context.Context, mgr ctrl.Manager) error {
	if err := agent.SetupWithManager(ctx, mgr, a.opts); err != nil {
		return fmt.Errorf("set up the agent provider: %w", err)
	}
	return nil
}

// WebhooksReady proves the API server calls the agent provider's webhooks:
// a dry-run AgentMachine whose agentLabelSelector has an unknown operator
// is refused with the webhook's message (the schema alone accepts it).
func (a *Agent) WebhooksReady(ctx context.Context, c client.Client) error {
	if a.opts.SkipWebhooks {
		return nil
	}
	am := &capiagentv1.AgentMachine{
		ObjectMeta: metav1.ObjectMeta{Name: "paritylab-webhook-probe", Namespace: probeNamespace},
		Spec: capiagentv1.AgentMachineSpec{AgentLabelSelector: &metav1.LabelSelector{
			MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "probe", Operator: "Probe"}},
		}},
	}
	return refused(c.Create(ctx, am, client.DryRunAll), "AgentMachine", "agentLabelSelector picks the Agents")
}
