package openshiftassistedconfig

import (
	"context"
	"errors"
	"fmt"
	"time"

	hivev1 "github.com/openshift/hive/apis/hive/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/cluster-api/util"
	"sigs.k8s.io/cluster-api/util/patch"
	"sigs.k8s.io/cluster-api/util/paused"
	"sigs.k8s.io/cluster-api/util/predicates"

	bootstrapv1 "github.com/paritylab/paritylab/providers/bootstrap/api/v1alpha2"
	"github.com/paritylab/paritylab/providers/bootstrap/internal/discovery"
	agentv1 "github.com/paritylab/paritylab/providers/thirdparty/agentinstall/v1beta1"
	hiveextv1 "github.com/paritylab/paritylab/providers/thirdparty/hiveextensions/v1beta1"
)

// Finalizer holds a config until its InfraEnv and Agents are removed.
const Finalizer = "openshiftassistedconfig.bootstrap.cluster.x-k8s.io/deprovision"

// defaultRetryAfter is how soon a config waiting on something that sends
// no event (assisted-service over HTTP) is looked at again.
const defaultRetryAfter = 20 * time.Second

// +kubebuilder:rbac:groups=bootstrap.cluster.x-k8s.io,resources=openshiftassistedconfigs;openshiftassistedconfigs/status;openshiftassistedconfigs/finalizers,verbs=get;list;watch;update;patch
// +kubebuilder:rbac:groups=cluster.x-k8s.io,resources=machines;clusters,verbs=get;list;watch
// +kubebuilder:rbac:groups=agent-install.openshift.io,resources=infraenvs,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=agent-install.openshift.io,resources=agents,verbs=get;list;watch;delete
// +kubebuilder:rbac:groups=hive.openshift.io,resources=clusterdeployments,verbs=get;list;watch
// +kubebuilder:rbac:groups=extensions.hive.openshift.io,resources=agentclusterinstalls,verbs=get;list;watch
// +kubebuilder:rbac:groups="",resources=secrets,verbs=get;list;watch;create;update;patch
// +kubebuilder:rbac:groups="",resources=events,verbs=create;patch

// Reconciler reconciles OpenshiftAssistedConfigs.
type Reconciler struct {
	Client client.Client
	// Ignition fetches discovery ignitions. Default: over HTTP(S).
	Ignition discovery.Fetcher
	// WatchFilterValue, when set, limits reconciliation to objects labelled
	// cluster.x-k8s.io/watch-filter with this value.
	WatchFilterValue string
	// RetryAfter is how soon a failed discovery ignition fetch is retried.
	// Default 20s.
	RetryAfter time.Duration
}

// SetupWithManager registers the controller and its watches.
func (r *Reconciler) SetupWithManager(ctx context.Context, mgr ctrl.Manager, opts controller.Options) error {
	if r.Client == nil {
		return errors.New("openshiftassistedconfig: Client is required")
	}
	if r.Ignition == nil {
		r.Ignition = &discovery.HTTP{}
	}
	if r.RetryAfter == 0 {
		r.RetryAfter = defaultRetryAfter
	}
	log := ctrl.LoggerFrom(ctx)
	err := ctrl.NewControllerManagedBy(mgr).
		For(&bootstrapv1.OpenshiftAssistedConfig{}).
		Named("openshiftassistedconfig").
		WithOptions(opts).
		WithEventFilter(predicates.ResourceHasFilterLabel(mgr.GetScheme(), log, r.WatchFilterValue)).
		Owns(&agentv1.InfraEnv{}).
		Watches(&clusterv1.Machine{}, handler.EnqueueRequestsFromMapFunc(r.machineToConfig)).
		Watches(&clusterv1.Cluster{}, handler.EnqueueRequestsFromMapFunc(r.clusterObjectToConfigs)).
		Watches(&hivev1.ClusterDeployment{}, handler.EnqueueRequestsFromMapFunc(r.clusterObjectToConfigs)).
		Watches(&hiveextv1.AgentClusterInstall{}, handler.EnqueueRequestsFromMapFunc(r.clusterObjectToConfigs)).
		Complete(r)
	if err != nil {
		return fmt.Errorf("set up OpenshiftAssistedConfig controller: %w", err)
	}
	return nil
}

// Reconcile brings one config closer to having its bootstrap data.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (_ ctrl.Result, retErr error) {
	log := ctrl.LoggerFrom(ctx)
	config := &bootstrapv1.OpenshiftAssistedConfig{}
	if err := r.Client.Get(ctx, req.NamespacedName, config); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	s, err := r.newScope(ctx, config)
	if err != nil {
		return ctrl.Result{}, err
	}
	if s.machine != nil {
		log = log.WithValues("Machine", klogRef(s.machine))
		ctx = ctrl.LoggerInto(ctx, log)
	}

	if isPaused, requeue, err := paused.EnsurePausedCondition(ctx, r.Client, s.cluster, config); err != nil || isPaused || requeue {
		return ctrl.Result{}, err
	}

	helper, err := patch.NewHelper(config, r.Client)
	if err != nil {
		return ctrl.Result{}, fmt.Errorf("create patch helper: %w", err)
	}
	defer func() {
		setReadyCondition(config)
		opts := []patch.Option{patch.WithOwnedConditions{Conditions: []string{
			bootstrapv1.ReadyCondition, bootstrapv1.InfraEnvReadyCondition, bootstrapv1.DataSecretAvailableCondition,
		}}}
		if retErr == nil {
			opts = append(opts, patch.WithStatusObservedGeneration{})
		}
		if err := helper.Patch(ctx, config, opts...); err != nil {
			retErr = errors.Join(retErr, fmt.Errorf("patch OpenshiftAssistedConfig: %w", err))
		}
	}()

	if !config.DeletionTimestamp.IsZero() {
		return ctrl.Result{}, r.reconcileDelete(ctx, s)
	}
	if controllerutil.AddFinalizer(config, Finalizer) {
		// Persist the finalizer before creating anything it guards.
		return ctrl.Result{}, nil
	}
	return r.reconcileNormal(ctx, s)
}

// scope is what one reconcile works with.
type scope struct {
	config  *bootstrapv1.OpenshiftAssistedConfig
	machine *clusterv1.Machine // nil until a Machine owns the config
	// machineMissing says the owner reference names a Machine that is gone.
	machineMissing bool
	cluster        *clusterv1.Cluster // nil until known
}

func (r *Reconciler) newScope(ctx context.Context, config *bootstrapv1.OpenshiftAssistedConfig) (*scope, error) {
	s := &scope{config: config}
	machine, err := util.GetOwnerMachine(ctx, r.Client, config.ObjectMeta)
	switch {
	case apierrors.IsNotFound(err):
		s.machineMissing = true
		return s, nil
	case err != nil:
		return nil, fmt.Errorf("get owner Machine: %w", err)
	case machine == nil:
		return s, nil
	}
	s.machine = machine
	cluster, err := util.GetClusterByName(ctx, r.Client, machine.Namespace, machine.Spec.ClusterName)
	switch {
	case apierrors.IsNotFound(err):
		return s, nil
	case err != nil:
		return nil, fmt.Errorf("get Cluster of Machine %s: %w", machine.Name, err)
	}
	s.cluster = cluster
	return s, nil
}

// machineToConfig maps a Machine to the OpenshiftAssistedConfig it
// references.
func (r *Reconciler) machineToConfig(_ context.Context, o client.Object) []reconcile.Request {
	m, ok := o.(*clusterv1.Machine)
	if !ok {
		return nil
	}
	ref := m.Spec.Bootstrap.ConfigRef
	if ref.Kind != "OpenshiftAssistedConfig" || ref.APIGroup != bootstrapv1.GroupVersion.Group || ref.Name == "" {
		return nil
	}
	return []reconcile.Request{{NamespacedName: client.ObjectKey{Namespace: m.Namespace, Name: ref.Name}}}
}

// clusterObjectToConfigs maps a Cluster, or an object labelled with a
// cluster name (ClusterDeployment, AgentClusterInstall), to the cluster's
// configs.
func (r *Reconciler) clusterObjectToConfigs(ctx context.Context, o client.Object) []reconcile.Request {
	name := o.GetLabels()[clusterv1.ClusterNameLabel]
	if _, isCluster := o.(*clusterv1.Cluster); isCluster {
		name = o.GetName()
	}
	if name == "" {
		return nil
	}
	list := &bootstrapv1.OpenshiftAssistedConfigList{}
	if err := r.Client.List(ctx, list, client.InNamespace(o.GetNamespace()), client.MatchingLabels{clusterv1.ClusterNameLabel: name}); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "List OpenshiftAssistedConfigs of a cluster", "cluster", name)
		return nil
	}
	out := make([]reconcile.Request, 0, len(list.Items))
	for _, c := range list.Items {
		out = append(out, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&c)})
	}
	return out
}

func klogRef(o client.Object) string { return o.GetNamespace() + "/" + o.GetName() }
