package hypershift

import (
	"context"
	"fmt"

	hypershiftv1beta1 "github.com/openshift/hypershift/api/hypershift/v1beta1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	clusterv1beta1 "sigs.k8s.io/cluster-api/api/core/v1beta1"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// NodePoolLabel names, on a hosted cluster's Node, the NodePool whose
// Machine it is (HyperShift's hosted cluster config operator sets it).
const NodePoolLabel = "hypershift.openshift.io/nodePool"

// condition is a NodePool condition.
func condition(t string, ok bool, reason, msg string) hypershiftv1beta1.NodePoolCondition {
	status := corev1.ConditionFalse
	if ok {
		status = corev1.ConditionTrue
	}
	return hypershiftv1beta1.NodePoolCondition{Type: t, Status: status, Reason: reason, Message: msg}
}

// setCondition sets c among conds, keeping its transition time while its
// status stays.
func setCondition(conds *[]hypershiftv1beta1.NodePoolCondition, c hypershiftv1beta1.NodePoolCondition) {
	for i := range *conds {
		old := &(*conds)[i]
		if old.Type != c.Type {
			continue
		}
		c.LastTransitionTime = old.LastTransitionTime
		if old.Status != c.Status {
			c.LastTransitionTime = metav1.Now()
		}
		*old = c
		return
	}
	c.LastTransitionTime = metav1.Now()
	*conds = append(*conds, c)
}

func removeCondition(conds *[]hypershiftv1beta1.NodePoolCondition, t string) {
	out := (*conds)[:0]
	for _, c := range *conds {
		if c.Type != t {
			out = append(out, c)
		}
	}
	*conds = out
}

// setNodePoolCondition writes one condition of a NodePool.
func (o *Operator) setNodePoolCondition(ctx context.Context, np *hypershiftv1beta1.NodePool, c hypershiftv1beta1.NodePoolCondition) error {
	patch := client.MergeFrom(np.DeepCopy())
	c.ObservedGeneration = np.Generation
	setCondition(&np.Status.Conditions, c)
	if err := o.client.Status().Patch(ctx, np, patch); err != nil {
		return fmt.Errorf("write the status of NodePool %s: %w", np.Name, err)
	}
	return nil
}

// writeNodePoolStatus writes the NodePool's status from its
// MachineDeployment and Machines as HyperShift does (capi.go
// reconcileMachineDeploymentStatus, conditions.go): replicas are the
// available ones, Ready is the MachineDeployment's, the version is the
// target once the rollout completed, and the Machines' Nodes get the
// NodePool label. It looks again soon while the rollout goes on.
func (o *Operator) writeNodePoolStatus(ctx context.Context, np *hypershiftv1beta1.NodePool, capi capiAccess, in NodePoolObjectsInput, md *clusterv1beta1.MachineDeployment) (ctrl.Result, error) {
	machines, err := nodePoolMachines(ctx, capi, in.ControlPlaneNamespace, np)
	if err != nil {
		return ctrl.Result{}, err
	}
	before := np.Status.DeepCopy()
	st := &np.Status
	st.Replicas = md.Status.AvailableReplicas
	complete := rolloutComplete(md, np)
	if complete {
		st.Version = in.ReleaseVersion
	}
	removeCondition(&st.Conditions, string(hypershiftv1beta1.IgnitionEndpointAvailable))
	for _, c := range []hypershiftv1beta1.NodePoolCondition{
		readyCondition(md), updatingVersionCondition(st.Version, in.ReleaseVersion), allMachinesReadyCondition(np, machines),
		condition(hypershiftv1beta1.NodePoolUpdateManagementEnabledConditionType, true, hypershiftv1beta1.AsExpectedReason, ""),
	} {
		c.ObservedGeneration = np.Generation
		setCondition(&st.Conditions, c)
	}
	if err := o.labelNodes(ctx, np, machines); err != nil {
		return ctrl.Result{}, err
	}
	if !equality.Semantic.DeepEqual(before, st) {
		if err := o.client.Status().Update(ctx, np); err != nil {
			return ctrl.Result{}, fmt.Errorf("write the status of NodePool %s: %w", np.Name, err)
		}
	}
	if !complete || len(machines) != int(ptr.Deref(np.Spec.Replicas, 0)) {
		return ctrl.Result{RequeueAfter: nodePoolRecheck}, nil
	}
	return ctrl.Result{RequeueAfter: statusRecheck}, nil
}

// rolloutComplete says whether every wanted Machine is updated and
// available and the MachineDeployment saw its last spec.
func rolloutComplete(md *clusterv1beta1.MachineDeployment, np *hypershiftv1beta1.NodePool) bool {
	want := ptr.Deref(np.Spec.Replicas, 0)
	s := md.Status
	return md.Status.ObservedGeneration >= md.Generation && s.Replicas == want && s.UpdatedReplicas == want && s.AvailableReplicas == want
}

// readyCondition is the MachineDeployment's v1beta1 Ready condition.
func readyCondition(md *clusterv1beta1.MachineDeployment) hypershiftv1beta1.NodePoolCondition {
	for _, c := range md.Status.Conditions {
		if c.Type != clusterv1beta1.ReadyCondition {
			continue
		}
		reason := c.Reason
		if reason == "" {
			reason = hypershiftv1beta1.AsExpectedReason
		}
		return hypershiftv1beta1.NodePoolCondition{Type: hypershiftv1beta1.NodePoolReadyConditionType, Status: c.Status,
			Severity: string(c.Severity), Reason: reason, Message: c.Message}
	}
	return condition(hypershiftv1beta1.NodePoolReadyConditionType, false, "WaitingForMachineDeployment", "The MachineDeployment reports no Ready condition yet")
}

func updatingVersionCondition(current, target string) hypershiftv1beta1.NodePoolCondition {
	if current != target {
		return condition(hypershiftv1beta1.NodePoolUpdatingVersionConditionType, true, hypershiftv1beta1.AsExpectedReason,
			"Updating version in progress. Target version: "+target)
	}
	return condition(hypershiftv1beta1.NodePoolUpdatingVersionConditionType, false, hypershiftv1beta1.AsExpectedReason, "")
}

// allMachinesReadyCondition aggregates the Machines' Ready conditions.
func allMachinesReadyCondition(np *hypershiftv1beta1.NodePool, machines []clusterv1.Machine) hypershiftv1beta1.NodePoolCondition {
	const t = hypershiftv1beta1.NodePoolAllMachinesReadyConditionType
	if len(machines) == 0 {
		if ptr.Deref(np.Spec.Replicas, 0) == 0 {
			return condition(t, true, hypershiftv1beta1.AsExpectedReason, "NodePool set to no replicas")
		}
		return condition(t, false, hypershiftv1beta1.NodePoolNotFoundReason, "No Machines are created")
	}
	for _, m := range machines {
		if !meta.IsStatusConditionTrue(m.Status.Conditions, clusterv1.ReadyCondition) {
			return condition(t, false, "MachineNotReady", fmt.Sprintf("Machine %s is not ready", m.Name))
		}
	}
	return condition(t, true, hypershiftv1beta1.AsExpectedReason, "All is well")
}

// nodePoolMachines are the Machines made for the NodePool.
func nodePoolMachines(ctx context.Context, c client.Reader, cpns string, np *hypershiftv1beta1.NodePool) ([]clusterv1.Machine, error) {
	list := &clusterv1.MachineList{}
	if err := c.List(ctx, list, client.InNamespace(cpns)); err != nil {
		return nil, fmt.Errorf("list Machines of %s: %w", cpns, err)
	}
	key := client.ObjectKeyFromObject(np).String()
	var out []clusterv1.Machine
	for _, m := range list.Items {
		if m.Annotations[NodePoolAnnotation] == key {
			out = append(out, m)
		}
	}
	return out, nil
}

// labelNodes gives the hosted cluster's Nodes of the NodePool's Machines
// the NodePool label, as the hosted cluster config operator does.
func (o *Operator) labelNodes(ctx context.Context, np *hypershiftv1beta1.NodePool, machines []clusterv1.Machine) error {
	api := o.HostedAPI(types.NamespacedName{Namespace: np.Namespace, Name: np.Spec.ClusterName})
	if api == nil {
		return nil
	}
	hosted, err := client.New(api.RESTConfig(), client.Options{})
	if err != nil {
		return err
	}
	for _, m := range machines {
		if !m.Status.NodeRef.IsDefined() {
			continue
		}
		node := &corev1.Node{}
		if err := hosted.Get(ctx, client.ObjectKey{Name: m.Status.NodeRef.Name}, node); err != nil {
			return client.IgnoreNotFound(err)
		}
		if node.Labels[NodePoolLabel] == np.Name {
			continue
		}
		patch := client.MergeFrom(node.DeepCopy())
		if node.Labels == nil {
			node.Labels = map[string]string{}
		}
		node.Labels[NodePoolLabel] = np.Name
		if err := hosted.Patch(ctx, node, patch); err != nil {
			return fmt.Errorf("label node %s with its NodePool: %w", node.Name, err)
		}
	}
	return nil
}
