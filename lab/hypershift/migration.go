package hypershift

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/go-logr/logr"
	hypershiftv1beta1 "github.com/openshift/hypershift/api/hypershift/v1beta1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// The "private CAPI types" enhancement's migration annotations on a
// HostedCluster, and the lab's trigger and failure hook.
const (
	// MigrationInProgressAnnotation "true": neither operator reconciles
	// the cluster (the lab's HostedCluster and NodePool controllers wait).
	MigrationInProgressAnnotation = "hypershift.openshift.io/migration-in-progress"
	// MigrationFailedAnnotation holds why the last migration failed and
	// was rolled back; none is tried again until it is removed.
	MigrationFailedAnnotation = "hypershift.openshift.io/migration-failed"
	// ScopeAnnotation "legacy" marks a cluster the legacy operator
	// reconciles; a migrated cluster loses it.
	ScopeAnnotation = "hypershift.openshift.io/scope"
	// MigrateCAPITypesAnnotation "private" asks the lab to migrate the
	// cluster: the lab's stand-in for the new operator's rollout, which
	// migrates every cluster in turn.
	MigrateCAPITypesAnnotation = "paritylab.io/migrate-capi-types"
	// MigrationFailAtAnnotation names a migration step up to the commit
	// (lock, pause, stop-components, copy, rewrite-owners,
	// start-components, unpause, health-check, annotate) that fails on
	// purpose, to exercise the rollback (lab only).
	MigrationFailAtAnnotation = "paritylab.io/migration-fail-at"
)

// MigrationFailedReason is the reason of the Warning event a rolled-back
// migration records; the enhancement fires the alert
// HyperShiftPrivateCAPIMigrationFailed, and the lab has no Prometheus.
const MigrationFailedReason = "PrivateCAPIMigrationFailed"

// Migration timing, the enhancement's: components get 5 minutes to stop
// and 10 to start (the lab's in-process ones take well under a second),
// and the health checks must pass for 30 s without a break within 5
// minutes.
const (
	// migrationRecheck is when the controllers look again at a cluster
	// a migration holds.
	migrationRecheck = 5 * time.Second

	healthWindow  = 30 * time.Second
	healthTimeout = 5 * time.Minute
	healthPoll    = 2 * time.Second
)

// migrationTiming is how long the health checks must pass, within how
// long; tests shorten the window.
type migrationTiming struct{ window, timeout time.Duration }

// setupMigrationController runs migrations one HostedCluster at a time,
// as the enhancement's migration controller does.
func (o *Operator) setupMigrationController(mgr ctrl.Manager) error {
	o.recorder = mgr.GetEventRecorderFor("hypershift-capi-migration")
	return ctrl.NewControllerManagedBy(mgr).Named("hypershift-capi-migration").
		For(&hypershiftv1beta1.HostedCluster{}, builder.WithPredicates(predicate.NewPredicateFuncs(func(obj client.Object) bool {
			return obj.GetAnnotations()[MigrateCAPITypesAnnotation] != ""
		}))).
		WithOptions(controller.Options{MaxConcurrentReconciles: 1}).
		Complete(reconcile.Func(o.reconcileMigration))
}

func (o *Operator) reconcileMigration(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	hc := &hypershiftv1beta1.HostedCluster{}
	if err := o.client.Get(ctx, req.NamespacedName, hc); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	committed := usesPrivateTypes(hc) && hc.Annotations[MigrationInProgressAnnotation] == "true"
	switch {
	case !hc.DeletionTimestamp.IsZero(), hc.Annotations[MigrateCAPITypesAnnotation] != "private",
		usesPrivateTypes(hc) && !committed, hc.Annotations[MigrationFailedAnnotation] != "":
		return ctrl.Result{}, nil
	}
	h := o.runtimeOf(hc)
	if h == nil || hc.Spec.InfraID == "" {
		return ctrl.Result{RequeueAfter: statusRecheck}, nil // not running yet
	}
	lock := o.hostedLock(req.NamespacedName)
	lock.Lock()
	defer lock.Unlock()
	m := &migration{o: o, hc: hc, runtime: h, cpns: ControlPlaneNamespace(hc), uids: map[types.UID]types.UID{}}
	if committed {
		return ctrl.Result{}, m.finish(ctx)
	}
	if err := m.run(ctx); err != nil {
		o.opts.Logger.Error(err, "Private CAPI types migration", "hostedCluster", req.String())
		return ctrl.Result{RequeueAfter: migrationRecheck}, nil // finish again if committed
	}
	return ctrl.Result{}, nil
}

// hostedLock is held by a migration for its whole run; the HostedCluster
// and NodePool controllers skip the cluster while it is held.
func (o *Operator) hostedLock(key types.NamespacedName) *sync.Mutex {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.locks == nil {
		o.locks = map[types.NamespacedName]*sync.Mutex{}
	}
	if o.locks[key] == nil {
		o.locks[key] = &sync.Mutex{}
	}
	return o.locks[key]
}

// migrating says whether a migration holds the HostedCluster: its
// controllers then leave it alone and look again later.
func (o *Operator) migrating(hc *hypershiftv1beta1.HostedCluster) (release func(), busy bool) {
	if hc.Annotations[MigrationInProgressAnnotation] == "true" {
		return nil, true
	}
	lock := o.hostedLock(types.NamespacedName{Namespace: hc.Namespace, Name: hc.Name})
	if !lock.TryLock() {
		return nil, true
	}
	return lock.Unlock, false
}

// migration is one run of the steps on one HostedCluster.
type migration struct {
	o       *Operator
	hc      *hypershiftv1beta1.HostedCluster
	runtime *hostedRuntime
	cpns    string

	// uids maps each standard CAPI object's UID to its private copy's.
	uids map[types.UID]types.UID
	// copies are the private objects made, in creation order.
	copies []*unstructured.Unstructured
	// owned are the objects whose owner references were rewritten, with
	// the references they had.
	owned []ownedObject
	// counts are the standard objects of each kind, for the health check.
	counts map[string]int

	paused, stopped, started bool
}

type step struct {
	name string
	run  func(context.Context) error
}

// steps are the steps up to the commit, annotating the cluster as on
// private types: any of them may fail and roll back.
func (m *migration) steps() []step {
	return []step{
		{"lock", m.lock},
		{"pause", m.pause},
		{"stop-components", m.stopComponents},
		{"copy", m.copyObjects},
		{"rewrite-owners", m.rewriteOwners},
		{"start-components", m.startComponents},
		{"unpause", m.unpause},
		{"health-check", m.healthCheck},
		{"annotate", m.annotate},
	}
}

// run runs every step; the first that fails (or the one the failure hook
// names) rolls everything back, and the cluster is marked failed. After
// the commit it finishes.
func (m *migration) run(ctx context.Context) error {
	failAt := m.hc.Annotations[MigrationFailAtAnnotation]
	for _, s := range m.steps() {
		do := s.run
		if s.name == failAt {
			do = func(context.Context) error {
				return fmt.Errorf("failure injected by %s", MigrationFailAtAnnotation)
			}
		}
		if err := do(ctx); err != nil {
			err = fmt.Errorf("step %s: %w", s.name, err)
			return errors.Join(err, m.rollback(ctx, err))
		}
		m.log().Info("Private CAPI types migration step done", "step", s.name)
	}
	return m.finish(ctx)
}

// finish deletes the standard objects and unlocks: after the commit,
// nothing rolls back; a failure is tried again (reconcileMigration finds
// the cluster on private types and still locked).
func (m *migration) finish(ctx context.Context) error {
	for _, s := range []step{{"delete-old", m.deleteOld}, {"unlock", m.unlock}} {
		if err := s.run(ctx); err != nil {
			return fmt.Errorf("step %s: %w", s.name, err)
		}
		m.log().Info("Private CAPI types migration step done", "step", s.name)
	}
	return nil
}

func (m *migration) log() logr.Logger { return m.o.opts.Logger.WithValues("hostedCluster", m.hc.Name) }

// ApplyAnnotations changes an object's annotations: a value sets one, nil
// removes it.
func ApplyAnnotations(obj metav1.Object, set map[string]*string) {
	annotations := obj.GetAnnotations()
	if annotations == nil {
		annotations = map[string]string{}
	}
	for k, v := range set {
		if v == nil {
			delete(annotations, k)
		} else {
			annotations[k] = *v
		}
	}
	obj.SetAnnotations(annotations)
}

// annotateHostedCluster changes the HostedCluster's annotations (a nil
// value removes one), fresh from the hub.
func (m *migration) annotateHostedCluster(ctx context.Context, set map[string]*string) error {
	hc := &hypershiftv1beta1.HostedCluster{}
	if err := m.o.apiReader.Get(ctx, client.ObjectKeyFromObject(m.hc), hc); err != nil {
		return err
	}
	patch := client.MergeFrom(hc.DeepCopy())
	ApplyAnnotations(hc, set)
	if err := m.o.client.Patch(ctx, hc, patch); err != nil {
		return fmt.Errorf("annotate HostedCluster %s: %w", hc.Name, err)
	}
	m.hc = hc
	return nil
}

func (m *migration) lock(ctx context.Context) error {
	return m.annotateHostedCluster(ctx, map[string]*string{MigrationInProgressAnnotation: ptr.To("true")})
}

func (m *migration) unlock(ctx context.Context) error {
	return m.annotateHostedCluster(ctx, map[string]*string{MigrationInProgressAnnotation: nil, MigrateCAPITypesAnnotation: nil})
}

func (m *migration) annotate(ctx context.Context) error {
	return m.annotateHostedCluster(ctx, map[string]*string{PrivateCAPITypesAnnotation: ptr.To("true"), ScopeAnnotation: nil})
}

func (m *migration) stopComponents(context.Context) error {
	m.stopped = true
	return m.runtime.stopCAPIComponents()
}

func (m *migration) startComponents(ctx context.Context) error {
	m.started = true
	return m.o.startCAPIComponents(ctx, m.hc, m.runtime, true)
}

// rollback undoes what the steps did, newest first: the private
// components stop, the owner references are restored, the copies go, the
// standard Cluster is unpaused and its components start again; the
// HostedCluster is marked failed and unlocked, and an event says why.
func (m *migration) rollback(ctx context.Context, cause error) error {
	var errs []error
	if m.started {
		errs = append(errs, m.runtime.stopCAPIComponents())
	}
	errs = append(errs, m.restoreOwners(ctx), m.deleteCopies(ctx))
	if m.paused {
		errs = append(errs, m.setPaused(ctx, standardGroupVersion, false))
	}
	if m.stopped || m.started {
		errs = append(errs, m.o.startCAPIComponents(ctx, m.hc, m.runtime, false))
	}
	errs = append(errs, m.annotateHostedCluster(ctx, map[string]*string{
		MigrationFailedAnnotation: ptr.To(cause.Error()), MigrationInProgressAnnotation: nil}))
	m.o.recorder.Eventf(m.hc, corev1.EventTypeWarning, MigrationFailedReason,
		"Migration to private CAPI types rolled back: %v", cause)
	return errors.Join(errs...)
}
