package capm3

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/go-logr/logr"
	bmov1alpha1 "github.com/metal3-io/baremetal-operator/apis/metal3.io/v1alpha1"
	capm3v1beta1 "github.com/metal3-io/cluster-api-provider-metal3/api/v1beta1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/handler"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
)

// machineReconciler reconciles Metal3Machines: it claims a host for the
// Machine, provisions it with the Machine's image and bootstrap data,
// reports the providerID and addresses once it is provisioned, and
// deprovisions and releases it when the Metal3Machine goes.
type machineReconciler struct {
	client client.Client
	// reader lists hosts live where a claim must be seen at once.
	reader       client.Reader
	requeueAfter time.Duration
}

// machineScope is what one reconcile works on.
type machineScope struct {
	m3m     *capm3v1beta1.Metal3Machine
	machine *clusterv1.Machine
	cluster *clusterv1.Cluster
	log     logr.Logger
}

func (r *machineReconciler) setupWithManager(_ context.Context, mgr ctrl.Manager, opts controller.Options) error {
	return ctrl.NewControllerManagedBy(mgr).
		Named("metal3machine").
		For(&capm3v1beta1.Metal3Machine{}).
		Owns(&corev1.Secret{}).
		Watches(&clusterv1.Machine{}, handler.EnqueueRequestsFromMapFunc(machineToInfraMachine)).
		Watches(&bmov1alpha1.BareMetalHost{}, handler.EnqueueRequestsFromMapFunc(hostToConsumer)).
		Watches(&clusterv1.Cluster{}, handler.EnqueueRequestsFromMapFunc(r.clusterToMachines)).
		WithOptions(opts).
		Complete(r)
}

func machineToInfraMachine(_ context.Context, o client.Object) []ctrl.Request {
	m := o.(*clusterv1.Machine)
	ref := m.Spec.InfrastructureRef
	if ref.Kind != "Metal3Machine" || ref.APIGroup != capm3v1beta1.GroupVersion.Group {
		return nil
	}
	return []ctrl.Request{{NamespacedName: types.NamespacedName{Namespace: m.Namespace, Name: ref.Name}}}
}

func hostToConsumer(_ context.Context, o client.Object) []ctrl.Request {
	h := o.(*bmov1alpha1.BareMetalHost)
	ref := h.Spec.ConsumerRef
	if ref == nil || ref.Kind != "Metal3Machine" {
		return nil
	}
	ns := ref.Namespace
	if ns == "" {
		ns = h.Namespace
	}
	return []ctrl.Request{{NamespacedName: types.NamespacedName{Namespace: ns, Name: ref.Name}}}
}

func (r *machineReconciler) clusterToMachines(ctx context.Context, o client.Object) []ctrl.Request {
	list := &capm3v1beta1.Metal3MachineList{}
	if err := r.client.List(ctx, list, client.InNamespace(o.GetNamespace()), client.MatchingLabels{clusterv1.ClusterNameLabel: o.GetName()}); err != nil {
		return nil
	}
	out := make([]ctrl.Request, 0, len(list.Items))
	for _, m := range list.Items {
		out = append(out, ctrl.Request{NamespacedName: client.ObjectKeyFromObject(&m)})
	}
	return out
}

// Reconcile: fetch → owner Machine and Cluster → pause → deferred patch →
// delete, or finalizer and the normal phases.
func (r *machineReconciler) Reconcile(ctx context.Context, req ctrl.Request) (_ ctrl.Result, retErr error) {
	m3m := &capm3v1beta1.Metal3Machine{}
	if err := r.client.Get(ctx, req.NamespacedName, m3m); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	s := &machineScope{m3m: m3m, log: ctrl.LoggerFrom(ctx).WithValues("Metal3Machine", req.NamespacedName)}
	var err error
	if s.machine, err = ownerMachine(ctx, r.client, m3m); err != nil {
		return ctrl.Result{}, err
	}
	if s.machine != nil {
		if s.cluster, err = machineCluster(ctx, r.client, s.machine); err != nil && m3m.DeletionTimestamp.IsZero() {
			return ctrl.Result{}, err
		}
	}
	if paused(s.cluster, m3m) {
		return ctrl.Result{}, nil
	}
	p := newPatcher(r.client, m3m)
	defer func() {
		retErr = errors.Join(retErr, p.patch(ctx, m3m, func(o client.Object) any { return o.(*capm3v1beta1.Metal3Machine).Status }))
	}()
	if !m3m.DeletionTimestamp.IsZero() {
		return r.reconcileDelete(ctx, s)
	}
	if s.machine == nil {
		setCondition(&m3m.Status.Conditions, falseCondition(capm3v1beta1.AssociateBMHCondition,
			capm3v1beta1.WaitingForMetal3MachineOwnerRefReason, "waiting for the Machine controller to set the owner reference"))
		return ctrl.Result{}, nil
	}
	controllerutil.AddFinalizer(m3m, capm3v1beta1.MachineFinalizer)
	return r.reconcileNormal(ctx, s)
}

// reconcileNormal waits for the cluster's infrastructure and the
// bootstrap data, claims and provisions a host, and reports it.
func (r *machineReconciler) reconcileNormal(ctx context.Context, s *machineScope) (ctrl.Result, error) {
	m3m := s.m3m
	if s.cluster.Status.Initialization.InfrastructureProvisioned == nil || !*s.cluster.Status.Initialization.InfrastructureProvisioned {
		setCondition(&m3m.Status.Conditions, falseCondition(capm3v1beta1.AssociateBMHCondition,
			capm3v1beta1.WaitingForClusterInfrastructureReason, "waiting for the cluster's infrastructure"))
		return ctrl.Result{}, nil
	}
	if s.machine.Spec.Bootstrap.DataSecretName == nil && m3m.Spec.UserData == nil {
		setCondition(&m3m.Status.Conditions, falseCondition(capm3v1beta1.AssociateBMHCondition,
			capm3v1beta1.WaitingForBootstrapReadyReason, "waiting for the bootstrap provider's data Secret"))
		return ctrl.Result{}, nil
	}
	if err := r.reconcileUserData(ctx, s); err != nil {
		return ctrl.Result{}, err
	}
	host, err := r.associate(ctx, s)
	if err != nil {
		setCondition(&m3m.Status.Conditions, falseCondition(capm3v1beta1.AssociateBMHCondition, capm3v1beta1.AssociateBMHFailedReason, err.Error()))
		return ctrl.Result{}, err
	}
	if host == nil {
		setCondition(&m3m.Status.Conditions, falseCondition(capm3v1beta1.AssociateBMHCondition,
			capm3v1beta1.AssociateBMHFailedReason, "no available host matches"))
		s.log.Info("No available BareMetalHost; waiting for one")
		return ctrl.Result{RequeueAfter: r.requeueAfter}, nil
	}
	setCondition(&m3m.Status.Conditions, trueCondition(capm3v1beta1.AssociateBMHCondition))
	if err := r.provisionHost(ctx, s, host); err != nil {
		return ctrl.Result{}, err
	}
	reportHost(s, host)
	if !m3m.Status.Ready {
		return ctrl.Result{RequeueAfter: r.requeueAfter}, nil
	}
	return ctrl.Result{}, nil
}

// hostKey reads the metal3.io/BareMetalHost annotation.
func hostKey(m3m *capm3v1beta1.Metal3Machine) (client.ObjectKey, bool, error) {
	v, ok := m3m.Annotations[hostAnnotation]
	if !ok || v == "" {
		return client.ObjectKey{}, false, nil
	}
	ns, name, found := cutKey(v)
	if !found {
		return client.ObjectKey{}, false, fmt.Errorf("annotation %s=%q is not <namespace>/<name>", hostAnnotation, v)
	}
	return client.ObjectKey{Namespace: ns, Name: name}, true, nil
}
