package cvo

import (
	"context"
	"fmt"
	"sync"
	"time"

	configv1 "github.com/openshift/api/config/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/paritylab/paritylab/providers/controlplane/release"
)

// Name is the name of the one ClusterVersion a cluster has.
const Name = "version"

// DefaultUpgradeDuration is how long an accepted update stays Partial unless
// configured otherwise.
const DefaultUpgradeDuration = 5 * time.Second

// NodeRecheck is how often an update whose time is up looks again at the
// control-plane nodes it waits for.
const NodeRecheck = 10 * time.Second

// RetrieveRetry is how soon the operator tries again to retrieve a payload
// it could not.
const RetrieveRetry = 30 * time.Second

// Reconciler applies spec.desiredUpdate of ClusterVersion "version".
type Reconciler struct {
	Client client.Client
	// UpgradeDuration is how long an accepted update stays Partial.
	// Default DefaultUpgradeDuration.
	UpgradeDuration time.Duration
	// Releases are releases the lab knows besides the update graph; an
	// update by image learns its version from them, as the real operator
	// reads it from the payload.
	Releases []configv1.Release
	// Payloads, when set, reads the release image an update targets from
	// its registry, as the real operator retrieves a payload before it
	// accepts it: an image the registry does not serve is refused
	// (ReleaseAccepted=False, RetrievePayload) and the version is the one
	// the payload names. Nil: versions come from Releases and the graph.
	Payloads release.Resolver
	// Now is the clock. Default time.Now.
	Now func() time.Time

	payloadsOnce sync.Once
	payloads     *payloads
}

var _ reconcile.Reconciler = (*Reconciler)(nil)

// SetupWithManager watches ClusterVersion "version", the ClusterOperators
// and the Nodes.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	toVersion := handler.EnqueueRequestsFromMapFunc(func(context.Context, client.Object) []reconcile.Request {
		return []reconcile.Request{{NamespacedName: types.NamespacedName{Name: Name}}}
	})
	return ctrl.NewControllerManagedBy(mgr).
		Named("lab-cluster-version-operator").
		For(&configv1.ClusterVersion{}, builder.WithPredicates(predicate.NewPredicateFuncs(func(o client.Object) bool {
			return o.GetName() == Name
		}))).
		// A ClusterOperator's Upgradeable condition feeds the version's.
		Watches(&configv1.ClusterOperator{}, toVersion).
		// A new Node is asked for the release's kubelet; a node that
		// reports it may be the last the update waits for. Heartbeats
		// alone wake nothing.
		Watches(&corev1.Node{}, toVersion, builder.WithPredicates(nodeRolloutChanged)).
		Complete(r)
}

// Reconcile brings status in line with spec and requeues itself while an
// update is in progress.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	cv := &configv1.ClusterVersion{}
	if err := r.Client.Get(ctx, req.NamespacedName, cv); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	ops, err := r.clusterOperators(ctx)
	if err != nil {
		return ctrl.Result{}, err
	}
	regs, err := nodeRegistries(ctx, r.Client)
	if err != nil {
		return ctrl.Result{}, err
	}
	before := cv.Status.DeepCopy()
	read := r.fetcher().fetch(ctx, cv, regs)
	r.accept(cv, ops, r.now(), read)
	waiting, err := rollOutNodes(ctx, r.Client, read.kubeletOf(cv.Status.Desired.Image))
	if err != nil {
		return ctrl.Result{}, err
	}
	left := r.progress(cv, ops, r.now(), waiting)
	if !equality.Semantic.DeepEqual(before, &cv.Status) {
		ctrl.LoggerFrom(ctx).V(1).Info("updating status", "desired", cv.Status.Desired.Version, "completesIn", left, "waitingOn", waiting)
		if err := r.Client.Status().Update(ctx, cv); err != nil {
			return ctrl.Result{}, fmt.Errorf("update ClusterVersion status: %w", err)
		}
	}
	if p, ok := read(targetImage(cv)); ok && p.err != nil && left == 0 {
		// The payload could not be retrieved: try again, as the real
		// operator does on its next sync, without waiting for a change.
		left = RetrieveRetry
	}
	return ctrl.Result{RequeueAfter: left}, nil
}

// sync computes the new status, with every node already running the
// release, and returns how long until the update in progress completes.
func (r *Reconciler) sync(cv *configv1.ClusterVersion, ops []configv1.ClusterOperator, now time.Time, read fetched) time.Duration {
	r.accept(cv, ops, now, read)
	return r.progress(cv, ops, now, nil)
}

// accept decides whether spec.desiredUpdate is taken, and begins it.
func (r *Reconciler) accept(cv *configv1.ClusterVersion, ops []configv1.ClusterOperator, now time.Time, read fetched) {
	st := &cv.Status
	setUpgradeable(st, ops, now)
	t, ref := resolve(cv, r.Releases, read)
	if ref != nil {
		setRefused(st, ref, now)
		return
	}
	if t.release.Image != st.Desired.Image {
		begin(st, t, now)
	}
	setAccepted(st, st.Desired, now)
}

// progress completes the update in progress once it has been Partial for
// UpgradeDuration, no ClusterOperator fails it and no control-plane node
// is waited for, and returns how long until it is checked again.
func (r *Reconciler) progress(cv *configv1.ClusterVersion, ops []configv1.ClusterOperator, now time.Time, waiting []string) time.Duration {
	st := &cv.Status
	failure := unavailableOperator(ops)
	left := advance(st, r.upgradeDuration(), now, len(waiting) == 0 && failure == nil)
	var waitingOn []string
	if left == 0 && len(waiting) > 0 && updating(st) {
		// Node changes wake the operator too; this is a backstop.
		left, waitingOn = NodeRecheck, waiting
	}
	setProgressConditions(st, now, progressState{waitingOn: waitingOn, failure: failure})
	st.ObservedGeneration = cv.Generation
	return left
}

// clusterOperators lists the cluster's ClusterOperators; none when the
// cluster has no such API, as the real operator's check passes then.
func (r *Reconciler) clusterOperators(ctx context.Context) ([]configv1.ClusterOperator, error) {
	list := &configv1.ClusterOperatorList{}
	if err := r.Client.List(ctx, list); err != nil {
		if meta.IsNoMatchError(err) {
			return nil, nil
		}
		return nil, fmt.Errorf("list ClusterOperators: %w", err)
	}
	return list.Items, nil
}

func (r *Reconciler) fetcher() *payloads {
	r.payloadsOnce.Do(func() {
		if r.Payloads != nil {
			r.payloads = &payloads{resolver: r.Payloads, read: map[string]payload{}}
		}
	})
	return r.payloads
}

func (r *Reconciler) now() time.Time {
	if r.Now != nil {
		return r.Now()
	}
	return time.Now()
}

func (r *Reconciler) upgradeDuration() time.Duration {
	if r.UpgradeDuration > 0 {
		return r.UpgradeDuration
	}
	return DefaultUpgradeDuration
}
