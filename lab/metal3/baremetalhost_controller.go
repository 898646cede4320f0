package metal3

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	bmov1alpha1 "github.com/metal3-io/baremetal-operator/apis/metal3.io/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/retry"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

const (
	// secretsIndex indexes BareMetalHosts by the Secrets they name.
	secretsIndex = "paritylab.metal3.secrets"
	// eventSource is the component BMO's events come from.
	eventSource = "metal3-baremetal-controller"
)

// hostReconciler reconciles BareMetalHosts the way BMO does.
type hostReconciler struct {
	client     client.Client
	reader     client.Reader // live reads: Secrets, conflict refetches
	recorder   record.EventRecorder
	opts       Options
	media      *mediaServer
	transports *bmcTransports
	images     imageSource
}

var _ reconcile.Reconciler = (*hostReconciler)(nil)

func newHostReconciler(mgr ctrl.Manager, opts Options, media *mediaServer) *hostReconciler {
	return &hostReconciler{
		client: mgr.GetClient(), reader: mgr.GetAPIReader(), recorder: mgr.GetEventRecorderFor(eventSource),
		opts: opts, media: media, transports: newBMCTransports(opts.RequestTimeout),
		images: imageSource{store: opts.Images},
	}
}

func (r *hostReconciler) setupWithManager(ctx context.Context, mgr ctrl.Manager) error {
	if err := mgr.GetFieldIndexer().IndexField(ctx, &bmov1alpha1.BareMetalHost{}, secretsIndex, hostSecretNames); err != nil {
		return fmt.Errorf("index BareMetalHosts by Secret: %w", err)
	}
	b := ctrl.NewControllerManagedBy(mgr).Named(r.opts.ControllerName).
		For(&bmov1alpha1.BareMetalHost{}, builder.WithPredicates(hostChanged())).
		WatchesMetadata(&corev1.Secret{}, handler.EnqueueRequestsFromMapFunc(r.hostsOfSecret)).
		WithOptions(controller.Options{MaxConcurrentReconciles: r.opts.Concurrency})
	if r.opts.PreprovisioningImages {
		b = b.Owns(&bmov1alpha1.PreprovisioningImage{})
	}
	err := b.Complete(r)
	if err != nil {
		return fmt.Errorf("set up the BareMetalHost controller: %w", err)
	}
	return nil
}

// hostChanged lets through what BMO reacts to: spec changes, annotations,
// finalizers and deletion; not the controller's own status updates.
func hostChanged() predicate.Predicate {
	return predicate.Funcs{UpdateFunc: func(e event.UpdateEvent) bool {
		o, n := e.ObjectOld, e.ObjectNew
		return o.GetGeneration() != n.GetGeneration() ||
			!equality.Semantic.DeepEqual(o.GetAnnotations(), n.GetAnnotations()) ||
			!slices.Equal(o.GetFinalizers(), n.GetFinalizers()) ||
			!o.GetDeletionTimestamp().Equal(n.GetDeletionTimestamp())
	}}
}

// hostSecretNames are the Secrets of the host's namespace it names.
func hostSecretNames(obj client.Object) []string {
	h, ok := obj.(*bmov1alpha1.BareMetalHost)
	if !ok {
		return nil
	}
	var names []string
	add := func(n string) {
		if n != "" && !slices.Contains(names, n) {
			names = append(names, n)
		}
	}
	add(h.Spec.BMC.CredentialsName)
	for _, ref := range []*corev1.SecretReference{h.Spec.UserData, h.Spec.MetaData, h.Spec.NetworkData} {
		if ref != nil && (ref.Namespace == "" || ref.Namespace == h.Namespace) {
			add(ref.Name)
		}
	}
	return names
}

func (r *hostReconciler) hostsOfSecret(ctx context.Context, secret client.Object) []reconcile.Request {
	hosts := &bmov1alpha1.BareMetalHostList{}
	if err := r.client.List(ctx, hosts, client.InNamespace(secret.GetNamespace()),
		client.MatchingFields{secretsIndex: secret.GetName()}); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "Cannot list the BareMetalHosts of a Secret", "secret", client.ObjectKeyFromObject(secret))
		return nil
	}
	out := make([]reconcile.Request, 0, len(hosts.Items))
	for _, h := range hosts.Items {
		out = append(out, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&h)})
	}
	return out
}

// Reconcile runs one step of a host's state machine: fetch, paused?,
// finalizer, hardware details annotation, state machine, save status.
func (r *hostReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	// A live read: a step acts on the BMC, so it must never start from a
	// cached state older than the previous step's outcome.
	host := &bmov1alpha1.BareMetalHost{}
	if err := r.reader.Get(ctx, req.NamespacedName, host); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if _, paused := host.Annotations[bmov1alpha1.PausedAnnotation]; paused {
		return ctrl.Result{}, nil
	}
	log := ctrl.LoggerFrom(ctx).WithValues("provisioningState", host.Status.Provisioning.State)
	ctx = ctrl.LoggerInto(ctx, log)
	if done, err := r.restoreStatus(ctx, host); done || err != nil {
		return requeueNow.ctrl(), err
	}
	hasFinalizer := controllerutil.ContainsFinalizer(host, bmov1alpha1.BareMetalHostFinalizer)
	if !host.DeletionTimestamp.IsZero() && !hasFinalizer {
		return ctrl.Result{}, nil // deleted, and not ours to hold
	}
	if !hasFinalizer {
		return requeueNow.ctrl(), r.addFinalizer(ctx, host)
	}
	if done, err := r.consumeHardwareDetails(ctx, host); done || err != nil {
		return requeueNow.ctrl(), err
	}
	before := host.Status.DeepCopy()
	s := newScope(host, log)
	res, err := r.reconcileHost(ctx, s)
	if !s.gone && !equality.Semantic.DeepEqual(before, &host.Status) {
		if serr := r.saveStatus(ctx, host); serr != nil {
			return ctrl.Result{}, errors.Join(err, serr)
		}
	}
	return res.ctrl(), err
}

// addFinalizer adds BMO's finalizer, which holds the host until it is
// deprovisioned and powered off.
func (r *hostReconciler) addFinalizer(ctx context.Context, host *bmov1alpha1.BareMetalHost) error {
	return r.patchMeta(ctx, host, func() {
		controllerutil.AddFinalizer(host, bmov1alpha1.BareMetalHostFinalizer)
	})
}

// reconcileHost is BMO's hostStateMachine.ReconcileState.
func (r *hostReconciler) reconcileHost(ctx context.Context, s *scope) (result, error) {
	initial := s.host.Status.Provisioning.State
	defer r.transition(s, initial)
	if res, ok, err := r.loadCredentials(ctx, s); !ok || err != nil {
		return res, err
	}
	if s.checkInitiateDelete() {
		return requeueNow, nil
	}
	if res, handled := r.checkDetached(s); handled {
		return res, nil
	}
	if res, ok := r.ensureRegistered(ctx, s); !ok {
		return res, nil
	}
	if res, ok, err := r.ensurePreprovImage(ctx, s); !ok || err != nil {
		return res, err
	}
	handle, found := r.handlers()[initial]
	if !found {
		return r.fail(s, bmov1alpha1.RegistrationError, fmt.Sprintf("provisioning state %q is not one this operator knows", initial)), nil
	}
	return handle(ctx, s)
}

// patchMeta changes metadata (annotations, finalizers) with a merge patch,
// keeping the status changes of this reconcile, which are saved apart.
func (r *hostReconciler) patchMeta(ctx context.Context, host *bmov1alpha1.BareMetalHost, mutate func()) error {
	status := host.Status.DeepCopy()
	before := host.DeepCopy()
	mutate()
	if err := r.client.Patch(ctx, host, client.MergeFrom(before)); err != nil {
		return fmt.Errorf("update BareMetalHost %s: %w", host.Name, err)
	}
	host.Status = *status
	return nil
}

// saveStatus writes the whole status, as BMO does. The controller owns the
// status, so on a conflict the latest object gets this status.
func (r *hostReconciler) saveStatus(ctx context.Context, host *bmov1alpha1.BareMetalHost) error {
	now := metav1.Now()
	host.Status.LastUpdated = &now
	status := host.Status.DeepCopy()
	key := types.NamespacedName{Namespace: host.Namespace, Name: host.Name}
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		err := r.client.Status().Update(ctx, host)
		if !apierrors.IsConflict(err) {
			return err
		}
		latest := &bmov1alpha1.BareMetalHost{}
		if gerr := r.reader.Get(ctx, key, latest); gerr != nil {
			return gerr
		}
		latest.Status = *status
		*host = *latest
		return err
	})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("save status of BareMetalHost %s: %w", host.Name, err)
	}
	return nil
}

// result says when to look at a host again.
type result struct{ after time.Duration }

var (
	// requeueNow continues with the next step at once (a short delay, not
	// a rate-limited requeue, so long state sequences stay fast).
	requeueNow = result{after: time.Millisecond}
	// idle waits for the next change of the host or its Secrets.
	idle = result{}
)

func (r result) ctrl() ctrl.Result { return ctrl.Result{RequeueAfter: r.after} }
