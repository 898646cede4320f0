package nodeproviderid

import (
	"context"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"

	"sigs.k8s.io/cluster-api/util/predicates"

	capiagentv1 "github.com/paritylab/paritylab/providers/agent/api/v1beta1"
)

// +kubebuilder:rbac:groups=capi-provider.agent-install.openshift.io,resources=agentmachines,verbs=get;list;watch
// +kubebuilder:rbac:groups=capi-provider.agent-install.openshift.io,resources=agentmachines/status,verbs=get
// +kubebuilder:rbac:groups="",resources=secrets,verbs=get;update

// notReadyPoll is how often an AgentMachine that is not ready is looked at
// again (upstream L33-35, L65-68).
const notReadyPoll = 30 * time.Second

// Reconciler writes each ready AgentMachine's provider ID on its Node in
// the hosted cluster. Client is required; the zero value of every other
// field works.
type Reconciler struct {
	// Client reads AgentMachines (and, for the default RemoteClients,
	// kubeconfig Secrets).
	Client client.Client
	// RemoteClients reaches the hosted clusters. Default:
	// NewRemoteClients(Client).
	RemoteClients RemoteClients
	// WatchFilterValue, when set, limits reconciliation to AgentMachines
	// labelled cluster.x-k8s.io/watch-filter with this value. Upstream has
	// no such filter; empty (the default) behaves as upstream.
	WatchFilterValue string
}

// SetupWithManager registers the controller. It watches AgentMachines only
// (upstream L114-120); Nodes are polled through the AgentMachines' events
// and the retries of failed reconciles.
func (r *Reconciler) SetupWithManager(ctx context.Context, mgr ctrl.Manager, opts controller.Options) error {
	if r.Client == nil {
		return errors.New("nodeproviderid: Client is required")
	}
	err := ctrl.NewControllerManagedBy(mgr).
		For(&capiagentv1.AgentMachine{}, builder.WithPredicates(predicates.ResourceHasFilterLabel(mgr.GetScheme(), ctrl.LoggerFrom(ctx), r.WatchFilterValue))).
		Named("nodeproviderid").
		WithOptions(opts).
		Complete(r)
	if err != nil {
		return fmt.Errorf("set up NodeProviderID controller: %w", err)
	}
	return nil
}

// Reconcile sets the provider ID of a ready AgentMachine's Node (upstream
// L47-75). Not ready: look again in 30 s.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	am := &capiagentv1.AgentMachine{}
	if err := r.Client.Get(ctx, req.NamespacedName, am); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !am.Status.Ready {
		return ctrl.Result{RequeueAfter: notReadyPoll}, nil
	}
	return ctrl.Result{}, r.setProviderID(ctx, am)
}

// setProviderID writes the AgentMachine's provider ID on the Node named by
// its InternalDNS address, in the cluster of its namespace's kubeconfig
// (upstream L77-112). A Node whose provider ID is set to another value is
// an error, and is left as it is (Kubernetes would refuse the change
// anyway); an equal one is left alone.
func (r *Reconciler) setProviderID(ctx context.Context, am *capiagentv1.AgentMachine) error {
	nodeName := internalDNS(am)
	if nodeName == "" {
		return fmt.Errorf("AgentMachine %s has no %s address", am.Name, corev1.NodeInternalDNS)
	}
	// Upstream dereferences it unchecked; a ready AgentMachine has it.
	if am.Spec.ProviderID == nil || *am.Spec.ProviderID == "" {
		return fmt.Errorf("AgentMachine %s is ready without a provider ID", am.Name)
	}
	providerID := *am.Spec.ProviderID
	clients := r.RemoteClients
	if clients == nil {
		clients = NewRemoteClients(r.Client)
	}
	remote, err := clients.Client(ctx, am.Namespace)
	if err != nil {
		return fmt.Errorf("reach the cluster of AgentMachine %s: %w", am.Name, err)
	}
	node := &corev1.Node{}
	if err := remote.Get(ctx, client.ObjectKey{Name: nodeName}, node); err != nil {
		return fmt.Errorf("get Node %s: %w", nodeName, err)
	}
	log := ctrl.LoggerFrom(ctx).WithValues("Node", nodeName, "providerID", providerID)
	switch node.Spec.ProviderID {
	case providerID:
		log.V(4).Info("The Node has the provider ID already")
		return nil
	case "":
	default:
		return fmt.Errorf("node %s has provider ID %s, not the AgentMachine's %s", nodeName, node.Spec.ProviderID, providerID)
	}
	node.Spec.ProviderID = providerID
	if err := remote.Update(ctx, node); err != nil {
		return fmt.Errorf("set provider ID %s on Node %s: %w", providerID, nodeName, err)
	}
	log.Info("Set the Node's provider ID")
	return nil
}

// internalDNS is the first InternalDNS address of the AgentMachine: the
// Agent's host name, which the Node is named after.
func internalDNS(am *capiagentv1.AgentMachine) string {
	for _, a := range am.Status.Addresses {
		if corev1.NodeAddressType(a.Type) == corev1.NodeInternalDNS {
			return a.Address
		}
	}
	return ""
}
