package agent

import (
	"context"
	"fmt"

	hivev1 "github.com/openshift/hive/apis/hive/v1"
	"k8s.io/apimachinery/pkg/runtime"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	capiagentv1 "github.com/paritylab/paritylab/providers/agent/api/v1beta1"
	"github.com/paritylab/paritylab/providers/agent/internal/controllers/agentcluster"
	"github.com/paritylab/paritylab/providers/agent/internal/controllers/agentmachine"
	"github.com/paritylab/paritylab/providers/agent/internal/controllers/nodeproviderid"
	"github.com/paritylab/paritylab/providers/agent/internal/webhooks"
	agentv1 "github.com/paritylab/paritylab/providers/thirdparty/agentinstall/v1beta1"
	hiveextv1 "github.com/paritylab/paritylab/providers/thirdparty/hiveextensions/v1beta1"
)

// RemoteClients reaches the hosted clusters whose Nodes AgentMachines back.
type RemoteClients interface {
	// Client returns a client of the cluster whose Machines live in
	// namespace (a HyperShift control plane namespace).
	Client(ctx context.Context, namespace string) (client.Client, error)
}

// Options tune the provider. The zero value works: every namespace, no
// watch filter, webhooks on, hosted clusters reached through the
// admin-kubeconfig Secret of each control plane namespace.
//
// There is no namespace option: upstream's --namespace restricts the
// manager's cache, which its creator sets (cmd/internal/manager does, from
// the same flag).
type Options struct {
	// Concurrency is MaxConcurrentReconciles of each controller. Default 10.
	Concurrency int
	// AgentNamespace, when set, is the only namespace whose Agents are
	// listed and watched, through a cache of that namespace (upstream's
	// --agent-namespace). Empty: Agents of every namespace the manager's
	// cache sees.
	AgentNamespace string
	// WatchFilterValue, when set, limits reconciliation to objects labelled
	// cluster.x-k8s.io/watch-filter with this value. Upstream has no such
	// filter; empty behaves as upstream.
	WatchFilterValue string
	// SkipWebhooks leaves the webhooks out (a manager without a webhook
	// server).
	SkipWebhooks bool
	// RemoteClients reaches the hosted clusters for the NodeProviderID
	// controller. Default: a client built from the Secret admin-kubeconfig
	// (key kubeconfig) of the AgentMachine's namespace, as upstream.
	RemoteClients RemoteClients
}

// AddToScheme registers every type the provider reads or writes (the
// control planes it reads are unstructured).
func AddToScheme(s *runtime.Scheme) error {
	for _, add := range []func(*runtime.Scheme) error{
		capiagentv1.AddToScheme, clusterv1.AddToScheme, agentv1.AddToScheme,
		hivev1.AddToScheme, hiveextv1.AddToScheme,
	} {
		if err := add(s); err != nil {
			return fmt.Errorf("register agent provider types: %w", err)
		}
	}
	return nil
}

// SetupWithManager registers the controllers and, unless
// opts.SkipWebhooks, the webhooks.
func SetupWithManager(ctx context.Context, mgr ctrl.Manager, opts Options) error {
	if opts.Concurrency == 0 {
		opts.Concurrency = 10
	}
	copts := controller.Options{MaxConcurrentReconciles: opts.Concurrency}
	machines := &agentmachine.Reconciler{
		Client: mgr.GetClient(), AgentNamespace: opts.AgentNamespace, WatchFilterValue: opts.WatchFilterValue,
	}
	if err := machines.SetupWithManager(ctx, mgr, copts); err != nil {
		return err
	}
	clusters := &agentcluster.Reconciler{Client: mgr.GetClient(), WatchFilterValue: opts.WatchFilterValue}
	if err := clusters.SetupWithManager(ctx, mgr, copts); err != nil {
		return err
	}
	nodes := &nodeproviderid.Reconciler{Client: mgr.GetClient(), WatchFilterValue: opts.WatchFilterValue}
	if opts.RemoteClients != nil {
		nodes.RemoteClients = opts.RemoteClients
	}
	if err := nodes.SetupWithManager(ctx, mgr, copts); err != nil {
		return err
	}
	if opts.SkipWebhooks {
		return nil
	}
	return SetupWebhooksWithManager(mgr)
}

// SetupWebhooksWithManager registers the validating webhooks only.
func SetupWebhooksWithManager(mgr ctrl.Manager) error {
	if err := (&webhooks.Machine{}).SetupWebhookWithManager(mgr); err != nil {
		return fmt.Errorf("set up AgentMachine webhook: %w", err)
	}
	if err := (&webhooks.MachineTemplate{}).SetupWebhookWithManager(mgr); err != nil {
		return fmt.Errorf("set up AgentMachineTemplate webhook: %w", err)
	}
	if err := (&webhooks.Cluster{}).SetupWebhookWithManager(mgr); err != nil {
		return fmt.Errorf("set up AgentCluster webhook: %w", err)
	}
	return nil
}
