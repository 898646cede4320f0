package capm3

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/go-logr/logr"
	bmov1alpha1 "github.com/metal3-io/baremetal-operator/apis/metal3.io/v1alpha1"
	capm3v1beta1 "github.com/metal3-io/cluster-api-provider-metal3/api/v1beta1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/handler"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
)

// remediationReconciler runs Metal3Remediations, which a
// MachineHealthCheck creates from a Metal3RemediationTemplate for an
// unhealthy Machine: Reboot power-cycles the Machine's host up to
// retryLimit times, timeout apart; when the Machine is still unhealthy
// after that, it hands the Machine to its owner (OwnerRemediated=False,
// so a MachineSet deletes and replaces it) and marks the host unhealthy
// so it is not chosen again.
type remediationReconciler struct {
	client client.Client
	// reader reads the remediation itself from the API server: its phase
	// says whether a reboot annotation is still to be added or already
	// withdrawn, and a stale cached copy would add it once more and leave
	// the host off.
	reader       client.Reader
	requeueAfter time.Duration
}

type remediationScope struct {
	rem     *capm3v1beta1.Metal3Remediation
	machine *clusterv1.Machine
	host    *bmov1alpha1.BareMetalHost
	log     logr.Logger
}

func (r *remediationReconciler) setupWithManager(mgr ctrl.Manager, opts controller.Options) error {
	return ctrl.NewControllerManagedBy(mgr).
		Named("metal3remediation").
		For(&capm3v1beta1.Metal3Remediation{}).
		// Power changes of the host move a reboot along.
		Watches(&bmov1alpha1.BareMetalHost{}, handler.EnqueueRequestsFromMapFunc(r.hostToRemediation)).
		WithOptions(opts).
		Complete(r)
}

// hostToRemediation maps a host to the remediation of its consumer's
// Machine, which CAPI names after the Machine.
func (r *remediationReconciler) hostToRemediation(ctx context.Context, o client.Object) []ctrl.Request {
	reqs := hostToConsumer(ctx, o)
	if len(reqs) == 0 {
		return nil
	}
	m3m := &capm3v1beta1.Metal3Machine{}
	if err := r.client.Get(ctx, reqs[0].NamespacedName, m3m); err != nil {
		return nil
	}
	m, err := ownerMachine(ctx, r.client, m3m)
	if err != nil || m == nil {
		return nil
	}
	return []ctrl.Request{{NamespacedName: client.ObjectKeyFromObject(m)}}
}

// Reconcile: fetch → Machine → pause → deferred patch → delete, or
// finalizer and the strategy's phases.
func (r *remediationReconciler) Reconcile(ctx context.Context, req ctrl.Request) (_ ctrl.Result, retErr error) {
	rem := &capm3v1beta1.Metal3Remediation{}
	if err := r.reader.Get(ctx, req.NamespacedName, rem); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	s := &remediationScope{rem: rem, log: ctrl.LoggerFrom(ctx).WithValues("Metal3Remediation", req.NamespacedName)}
	machine, cluster, err := r.remediatedMachine(ctx, rem)
	if err != nil {
		return ctrl.Result{}, err
	}
	if paused(cluster, rem) {
		return ctrl.Result{}, nil
	}
	s.machine = machine
	p := newPatcher(r.client, rem)
	defer func() {
		retErr = errors.Join(retErr, p.patch(ctx, rem, func(o client.Object) any { return o.(*capm3v1beta1.Metal3Remediation).Status }))
	}()
	if machine != nil {
		if s.host, err = r.machineHost(ctx, machine); err != nil {
			return ctrl.Result{}, err
		}
	}
	if !rem.DeletionTimestamp.IsZero() {
		return ctrl.Result{}, r.reconcileDelete(ctx, s)
	}
	controllerutil.AddFinalizer(rem, capm3v1beta1.RemediationFinalizer)
	if machine == nil || s.host == nil {
		s.log.Info("Nothing to remediate: no Machine or no host", "machine", machine != nil)
		rem.Status.Phase = capm3v1beta1.PhaseFailed
		return ctrl.Result{}, nil
	}
	if st := rem.Spec.Strategy; st == nil || st.Type != capm3v1beta1.RebootRemediationStrategy {
		rem.Status.Phase = capm3v1beta1.PhaseFailed
		s.log.Info("Unsupported remediation strategy; only Reboot is")
		return ctrl.Result{}, nil
	}
	return r.reconcileReboot(ctx, s)
}

// remediatedMachine is the Machine the remediation is for: its owner, as
// the MachineHealthCheck sets it, or the Machine of the same name.
func (r *remediationReconciler) remediatedMachine(ctx context.Context, rem *capm3v1beta1.Metal3Remediation) (*clusterv1.Machine, *clusterv1.Cluster, error) {
	m, err := ownerMachine(ctx, r.client, rem)
	if err != nil {
		return nil, nil, err
	}
	if m == nil {
		m = &clusterv1.Machine{}
		if err := r.client.Get(ctx, client.ObjectKeyFromObject(rem), m); err != nil {
			return nil, nil, client.IgnoreNotFound(err)
		}
	}
	cluster, err := machineCluster(ctx, r.client, m)
	if err != nil {
		return m, nil, client.IgnoreNotFound(err)
	}
	return m, cluster, nil
}

// machineHost follows Machine → Metal3Machine → annotated host.
func (r *remediationReconciler) machineHost(ctx context.Context, m *clusterv1.Machine) (*bmov1alpha1.BareMetalHost, error) {
	ref := m.Spec.InfrastructureRef
	if ref.Kind != "Metal3Machine" {
		return nil, nil
	}
	m3m := &capm3v1beta1.Metal3Machine{}
	if err := r.client.Get(ctx, client.ObjectKey{Namespace: m.Namespace, Name: ref.Name}, m3m); err != nil {
		return nil, client.IgnoreNotFound(err)
	}
	key, ok, err := hostKey(m3m)
	if err != nil || !ok {
		return nil, err
	}
	host := &bmov1alpha1.BareMetalHost{}
	if err := r.client.Get(ctx, key, host); err != nil {
		return nil, client.IgnoreNotFound(err)
	}
	return host, nil
}

// rebootAnnotation is this remediation's reboot annotation key, so it
// neither collides with nor removes anyone else's.
func rebootAnnotation(rem *capm3v1beta1.Metal3Remediation) string {
	return rebootAnnotationPrefix + "capm3-remediation-" + string(rem.UID)
}

// reconcileDelete withdraws a reboot still in progress (the
// MachineHealthCheck deletes the remediation once the Machine is healthy).
func (r *remediationReconciler) reconcileDelete(ctx context.Context, s *remediationScope) error {
	if s.host != nil {
		if err := r.setRebootAnnotation(ctx, s, false); err != nil {
			return err
		}
	}
	controllerutil.RemoveFinalizer(s.rem, capm3v1beta1.RemediationFinalizer)
	return nil
}

// setRebootAnnotation adds (hard power off) or removes the remediation's
// reboot annotation on the host.
func (r *remediationReconciler) setRebootAnnotation(ctx context.Context, s *remediationScope, on bool) error {
	key := rebootAnnotation(s.rem)
	_, has := s.host.Annotations[key]
	if has == on {
		return nil
	}
	before := s.host.DeepCopy()
	if on {
		if s.host.Annotations == nil {
			s.host.Annotations = map[string]string{}
		}
		s.host.Annotations[key] = `{"mode":"hard"}`
	} else {
		delete(s.host.Annotations, key)
	}
	if err := r.client.Patch(ctx, s.host, client.MergeFrom(before)); err != nil {
		return fmt.Errorf("set reboot annotation on BareMetalHost %s to %v: %w", s.host.Name, on, err)
	}
	return nil
}
