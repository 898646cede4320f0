package hypershift

import (
	"context"
	"fmt"
	"time"

	hypershiftv1beta1 "github.com/openshift/hypershift/api/hypershift/v1beta1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	clusterv1beta1 "sigs.k8s.io/cluster-api/api/core/v1beta1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
)

// deletionRecheck is how often a deleting HostedCluster looks again
// whether its CAPI Cluster is gone.
const deletionRecheck = 2 * time.Second

// deleteHostedCluster tears a hosted cluster down in HyperShift's order:
// its NodePools and then the CAPI Cluster, while the agent provider still
// runs (their Machines go, whose AgentMachines unbind their Agents), then
// the agent RBAC, the processes and the control-plane namespace; then
// the finalizer goes.
func (o *Operator) deleteHostedCluster(ctx context.Context, hc *hypershiftv1beta1.HostedCluster) (ctrl.Result, error) {
	if !controllerutil.ContainsFinalizer(hc, HostedClusterFinalizer) {
		return ctrl.Result{}, nil
	}
	if gone, err := o.deleteNodePools(ctx, hc); err != nil || !gone {
		return ctrl.Result{RequeueAfter: deletionRecheck}, err
	}
	if hc.Spec.InfraID != "" {
		gone, err := o.deleteCAPICluster(ctx, hc)
		if err != nil || !gone {
			return ctrl.Result{RequeueAfter: deletionRecheck}, err
		}
	}
	if err := o.deleteAgentRBAC(ctx, hc); err != nil {
		return ctrl.Result{}, err
	}
	if err := o.stopRuntime(types.NamespacedName{Namespace: hc.Namespace, Name: hc.Name}); err != nil {
		o.opts.Logger.Error(err, "Stop the hosted control plane", "hostedCluster", hc.Name)
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ControlPlaneNamespace(hc)}}
	if err := o.client.Delete(ctx, ns); client.IgnoreNotFound(err) != nil {
		return ctrl.Result{}, fmt.Errorf("delete control-plane namespace %s: %w", ns.Name, err)
	}
	patch := client.MergeFrom(hc.DeepCopy())
	controllerutil.RemoveFinalizer(hc, HostedClusterFinalizer)
	if err := o.client.Patch(ctx, hc, patch); err != nil {
		return ctrl.Result{}, fmt.Errorf("release HostedCluster %s: %w", hc.Name, err)
	}
	return ctrl.Result{}, nil
}

// deleteCAPICluster asks for the CAPI Cluster's deletion and says whether
// it is gone.
func (o *Operator) deleteCAPICluster(ctx context.Context, hc *hypershiftv1beta1.HostedCluster) (bool, error) {
	key := capiClusterKey(hc)
	capi, err := o.capiFor(hc)
	if err != nil {
		return false, err
	}
	cl := &clusterv1beta1.Cluster{}
	if err := capi.live.Get(ctx, key, cl); err != nil {
		if apierrors.IsNotFound(err) {
			return true, nil
		}
		return false, fmt.Errorf("read CAPI Cluster %s: %w", key, err)
	}
	if cl.DeletionTimestamp.IsZero() {
		if err := capi.Delete(ctx, cl); client.IgnoreNotFound(err) != nil {
			return false, fmt.Errorf("delete CAPI Cluster %s: %w", key, err)
		}
	}
	return false, nil
}

// deleteNodePools asks for the deletion of the HostedCluster's NodePools
// and says whether they are gone.
func (o *Operator) deleteNodePools(ctx context.Context, hc *hypershiftv1beta1.HostedCluster) (bool, error) {
	pools := &hypershiftv1beta1.NodePoolList{}
	if err := o.client.List(ctx, pools, client.InNamespace(hc.Namespace)); err != nil {
		return false, fmt.Errorf("list NodePools of HostedCluster %s: %w", hc.Name, err)
	}
	gone := true
	for i := range pools.Items {
		np := &pools.Items[i]
		if np.Spec.ClusterName != hc.Name {
			continue
		}
		gone = false
		if np.DeletionTimestamp.IsZero() {
			if err := o.client.Delete(ctx, np); client.IgnoreNotFound(err) != nil {
				return false, fmt.Errorf("delete NodePool %s: %w", np.Name, err)
			}
		}
	}
	return gone, nil
}
