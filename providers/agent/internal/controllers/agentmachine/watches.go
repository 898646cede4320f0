package agentmachine

import (
	"context"

	"k8s.io/apimachinery/pkg/runtime/schema"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	capiagentv1 "github.com/paritylab/paritylab/providers/agent/api/v1beta1"
	agentv1 "github.com/paritylab/paritylab/providers/thirdparty/agentinstall/v1beta1"
)

// Mapping of watched objects to AgentMachines (rule 13). Both leave out
// AgentMachines that WatchFilterValue excludes, so that a filtered
// controller reconciles only its own.

// agentToAgentMachines maps an Agent event (upstream L840-898): a bound
// Agent, known by its agentMachineRefNamespace annotation, to the
// AgentMachine of that namespace whose agentRef names it; an unbound
// Agent, if eligible, to every AgentMachine without an Agent.
func (r *Reconciler) agentToAgentMachines(ctx context.Context, agent *agentv1.Agent) []reconcile.Request {
	namespace, bound := agent.Annotations[capiagentv1.AgentMachineRefNamespace]
	if !bound && !eligible(agent) {
		return nil
	}
	list := &capiagentv1.AgentMachineList{}
	if err := r.Client.List(ctx, list, client.InNamespace(namespace)); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "List AgentMachines for an Agent event", "Agent", client.ObjectKeyFromObject(agent))
		return nil
	}
	var out []reconcile.Request
	for i := range list.Items {
		am := &list.Items[i]
		if !r.watched(am) {
			continue
		}
		ref := am.Status.AgentRef
		switch {
		case bound && ref != nil && ref.Namespace == agent.Namespace && ref.Name == agent.Name:
			return []reconcile.Request{{NamespacedName: client.ObjectKeyFromObject(am)}}
		case !bound && ref == nil:
			out = append(out, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(am)})
		}
	}
	return out
}

// machineToAgentMachine maps a Machine to the AgentMachine of its
// namespace that it owns: an owner reference of kind Machine in the
// cluster.x-k8s.io group, any version (upstream L805-838).
func (r *Reconciler) machineToAgentMachine(ctx context.Context, machine client.Object) []reconcile.Request {
	list := &capiagentv1.AgentMachineList{}
	if err := r.Client.List(ctx, list, client.InNamespace(machine.GetNamespace())); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "List AgentMachines for a Machine event", "Machine", client.ObjectKeyFromObject(machine))
		return nil
	}
	for i := range list.Items {
		am := &list.Items[i]
		if r.watched(am) && ownedByMachine(am, machine.GetName()) {
			return []reconcile.Request{{NamespacedName: client.ObjectKeyFromObject(am)}}
		}
	}
	return nil
}

// clusterToAgentMachines maps a Cluster to the AgentMachines labelled with
// its name, as Cluster API's Machine controller labels them. Upstream does
// not watch Clusters: this serves the pause of a Cluster, which upstream
// ignores (see paused).
func (r *Reconciler) clusterToAgentMachines(ctx context.Context, cluster client.Object) []reconcile.Request {
	list := &capiagentv1.AgentMachineList{}
	err := r.Client.List(ctx, list, client.InNamespace(cluster.GetNamespace()), client.MatchingLabels{clusterv1.ClusterNameLabel: cluster.GetName()})
	if err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "List AgentMachines for a Cluster event", "Cluster", client.ObjectKeyFromObject(cluster))
		return nil
	}
	var out []reconcile.Request
	for i := range list.Items {
		if r.watched(&list.Items[i]) {
			out = append(out, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&list.Items[i])})
		}
	}
	return out
}

func ownedByMachine(am *capiagentv1.AgentMachine, machine string) bool {
	for _, ref := range am.OwnerReferences {
		gv, err := schema.ParseGroupVersion(ref.APIVersion)
		if err == nil && ref.Kind == "Machine" && gv.Group == clusterv1.GroupVersion.Group && ref.Name == machine {
			return true
		}
	}
	return false
}

// watched says whether WatchFilterValue lets this controller reconcile am.
func (r *Reconciler) watched(am *capiagentv1.AgentMachine) bool {
	return r.WatchFilterValue == "" || am.Labels[clusterv1.WatchLabel] == r.WatchFilterValue
}
