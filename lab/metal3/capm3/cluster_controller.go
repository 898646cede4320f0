package capm3

import (
	"context"
	"errors"
	"fmt"
	"time"

	capm3v1beta1 "github.com/metal3-io/cluster-api-provider-metal3/api/v1beta1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/handler"

	clusterv1beta1 "sigs.k8s.io/cluster-api/api/core/v1beta1"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
)

// clusterReconciler reconciles Metal3Clusters: the cluster's
// infrastructure on bare metal is only its control-plane endpoint, which
// the user gives, so it is provisioned once that endpoint is valid.
type clusterReconciler struct {
	client client.Client
}

func (r *clusterReconciler) setupWithManager(mgr ctrl.Manager, opts controller.Options) error {
	return ctrl.NewControllerManagedBy(mgr).
		Named("metal3cluster").
		For(&capm3v1beta1.Metal3Cluster{}).
		// A Cluster's pause and owner references change what to do.
		Watches(&clusterv1.Cluster{}, handler.EnqueueRequestsFromMapFunc(clusterToInfraCluster)).
		WithOptions(opts).
		Complete(r)
}

func clusterToInfraCluster(_ context.Context, o client.Object) []ctrl.Request {
	c := o.(*clusterv1.Cluster)
	ref := c.Spec.InfrastructureRef
	if ref.Kind != "Metal3Cluster" || ref.APIGroup != capm3v1beta1.GroupVersion.Group {
		return nil
	}
	return []ctrl.Request{{NamespacedName: types.NamespacedName{Namespace: c.Namespace, Name: ref.Name}}}
}

// Reconcile: fetch, owner Cluster, pause, finalizer, then endpoint check
// or delete.
func (r *clusterReconciler) Reconcile(ctx context.Context, req ctrl.Request) (_ ctrl.Result, retErr error) {
	m3c := &capm3v1beta1.Metal3Cluster{}
	if err := r.client.Get(ctx, req.NamespacedName, m3c); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	cluster, err := ownerCluster(ctx, r.client, m3c)
	if err != nil {
		return ctrl.Result{}, err
	}
	log := ctrl.LoggerFrom(ctx).WithValues("Metal3Cluster", req.NamespacedName)
	if cluster == nil && m3c.DeletionTimestamp.IsZero() {
		log.V(1).Info("Waiting for the Cluster controller to set the owner reference")
		return ctrl.Result{}, nil
	}
	if paused(cluster, m3c) {
		return ctrl.Result{}, nil
	}
	p := newPatcher(r.client, m3c)
	defer func() {
		retErr = errors.Join(retErr, p.patch(ctx, m3c, func(o client.Object) any { return o.(*capm3v1beta1.Metal3Cluster).Status }))
	}()
	if !m3c.DeletionTimestamp.IsZero() {
		return r.reconcileDelete(ctx, m3c)
	}
	controllerutil.AddFinalizer(m3c, capm3v1beta1.ClusterFinalizer)
	reconcileEndpoint(m3c)
	return ctrl.Result{}, nil
}

// reconcileEndpoint makes the cluster ready when its control-plane
// endpoint is complete, and says what is missing otherwise.
func reconcileEndpoint(m3c *capm3v1beta1.Metal3Cluster) {
	now := metaNow()
	m3c.Status.LastUpdated = &now
	if err := m3c.Spec.IsValid(); err != nil {
		m3c.Status.Ready = false
		msg := fmt.Sprintf("invalid spec.controlPlaneEndpoint: %v", err)
		m3c.Status.FailureMessage = &msg
		setCondition(&m3c.Status.Conditions, falseCondition(capm3v1beta1.BaremetalInfrastructureReadyCondition,
			capm3v1beta1.ControlPlaneEndpointFailedReason, msg))
		return
	}
	m3c.Status.FailureMessage, m3c.Status.FailureReason = nil, nil
	m3c.Status.Ready = true
	setCondition(&m3c.Status.Conditions, trueCondition(capm3v1beta1.BaremetalInfrastructureReadyCondition))
	setCondition(&m3c.Status.Conditions, trueCondition(clusterv1beta1.ReadyCondition))
}

// reconcileDelete keeps the finalizer while Metal3Machines of the cluster
// remain: their hosts are still to be deprovisioned.
func (r *clusterReconciler) reconcileDelete(ctx context.Context, m3c *capm3v1beta1.Metal3Cluster) (ctrl.Result, error) {
	machines := &capm3v1beta1.Metal3MachineList{}
	name := m3c.Labels[clusterv1.ClusterNameLabel]
	if name != "" {
		if err := r.client.List(ctx, machines, client.InNamespace(m3c.Namespace), client.MatchingLabels{clusterv1.ClusterNameLabel: name}); err != nil {
			return ctrl.Result{}, fmt.Errorf("list Metal3Machines of cluster %s: %w", name, err)
		}
	}
	if len(machines.Items) > 0 {
		ctrl.LoggerFrom(ctx).Info("Waiting for the cluster's Metal3Machines to go", "count", len(machines.Items))
		return ctrl.Result{RequeueAfter: 5 * time.Second}, nil
	}
	controllerutil.RemoveFinalizer(m3c, capm3v1beta1.ClusterFinalizer)
	return ctrl.Result{}, nil
}
