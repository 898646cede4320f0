package agentmachine

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/client-go/rest"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/cluster"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/source"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/cluster-api/util/patch"
	"sigs.k8s.io/cluster-api/util/predicates"

	capiagentv1 "github.com/paritylab/paritylab/providers/agent/api/v1beta1"
	agentv1 "github.com/paritylab/paritylab/providers/thirdparty/agentinstall/v1beta1"
)

// +kubebuilder:rbac:groups=capi-provider.agent-install.openshift.io,resources=agentmachines,verbs=get;list;watch;update;patch
// +kubebuilder:rbac:groups=capi-provider.agent-install.openshift.io,resources=agentmachines/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=capi-provider.agent-install.openshift.io,resources=agentmachines/finalizers,verbs=update
// +kubebuilder:rbac:groups=capi-provider.agent-install.openshift.io,resources=agentclusters,verbs=get;list;watch
// +kubebuilder:rbac:groups=agent-install.openshift.io,resources=agents,verbs=get;list;watch;update;patch
// +kubebuilder:rbac:groups=cluster.x-k8s.io,resources=clusters;machines,verbs=get;list;watch
// +kubebuilder:rbac:groups="",resources=secrets,verbs=get;list;watch;create;update;patch

// Reconciler reconciles AgentMachines. Client is required; the zero value
// of every other field works.
type Reconciler struct {
	// Client reads and writes AgentMachines, Machines, Clusters,
	// AgentClusters and Secrets, and writes Agents.
	Client client.Client
	// APIReader reads the bound Agent afresh, past any cache (upstream
	// L674-682). Default: the manager's API reader (Client when Reconcile is
	// called without SetupWithManager).
	APIReader client.Reader
	// AgentNamespace, when set, is the only namespace whose Agents are
	// listed and watched, through a cache of that namespace only (upstream
	// main.go L67-68, L89-130: the --agent-namespace flag). Empty: every
	// namespace, through the manager's cache.
	AgentNamespace string
	// WatchFilterValue, when set, limits reconciliation to AgentMachines
	// labelled cluster.x-k8s.io/watch-filter with this value. Upstream has
	// no such filter; empty (the default) behaves as upstream.
	WatchFilterValue string

	// agents lists Agents: the AgentNamespace cache once SetupWithManager
	// made one; nil means Client.
	agents client.Reader
}

// SetupWithManager registers the controller, its watches of Agents and
// Machines (upstream L900-907) and of Clusters being unpaused, and, with
// AgentNamespace set, the cache of that namespace's Agents.
func (r *Reconciler) SetupWithManager(ctx context.Context, mgr ctrl.Manager, opts controller.Options) error {
	if r.Client == nil {
		return errors.New("agentmachine: Client is required")
	}
	if r.APIReader == nil {
		r.APIReader = mgr.GetAPIReader()
	}
	agentCache := mgr.GetCache()
	if r.AgentNamespace != "" {
		c, err := agentCluster(mgr, r.AgentNamespace)
		if err != nil {
			return err
		}
		agentCache = c.GetCache()
		r.agents = agentCache
	}
	log := ctrl.LoggerFrom(ctx)
	err := ctrl.NewControllerManagedBy(mgr).
		For(&capiagentv1.AgentMachine{}, builder.WithPredicates(predicates.ResourceHasFilterLabel(mgr.GetScheme(), log, r.WatchFilterValue))).
		Named("agentmachine").
		WithOptions(opts).
		Watches(&clusterv1.Machine{}, handler.EnqueueRequestsFromMapFunc(r.machineToAgentMachine)).
		// Not upstream's: resumes the AgentMachines of an unpaused Cluster.
		Watches(&clusterv1.Cluster{}, handler.EnqueueRequestsFromMapFunc(r.clusterToAgentMachines),
			builder.WithPredicates(predicates.ClusterUnpaused(mgr.GetScheme(), log))).
		WatchesRawSource(source.Kind(agentCache, &agentv1.Agent{}, handler.TypedEnqueueRequestsFromMapFunc(r.agentToAgentMachines))).
		Complete(r)
	if err != nil {
		return fmt.Errorf("set up AgentMachine controller: %w", err)
	}
	return nil
}

// agentCluster adds to mgr a cache of the Agents of one namespace, selected
// by a metadata.namespace field selector as upstream's second manager does
// (main.go L104-129); controller-runtime turns that selector into
// namespaced list and watch calls, so a Role in that namespace suffices.
func agentCluster(mgr ctrl.Manager, namespace string) (cluster.Cluster, error) {
	c, err := cluster.New(mgr.GetConfig(), func(o *cluster.Options) {
		o.Scheme = mgr.GetScheme()
		o.HTTPClient = mgr.GetHTTPClient()
		o.MapperProvider = func(*rest.Config, *http.Client) (meta.RESTMapper, error) { return mgr.GetRESTMapper(), nil }
		o.Cache.ByObject = map[client.Object]cache.ByObject{
			&agentv1.Agent{}: {Field: fields.OneTermEqualSelector("metadata.namespace", namespace)},
		}
	})
	if err != nil {
		return nil, fmt.Errorf("create the cache of Agents in namespace %s: %w", namespace, err)
	}
	if err := mgr.Add(c); err != nil {
		return nil, fmt.Errorf("add the cache of Agents in namespace %s: %w", namespace, err)
	}
	return c, nil
}

// Reconcile binds an Agent to one AgentMachine and reports on it, in
// upstream's order (L89-182): owner Machine, deletion hook, pause, backup
// label, bootstrap data, then nothing more once ready; else AgentCluster,
// Agent, Agent spec, status.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (_ ctrl.Result, retErr error) {
	am := &capiagentv1.AgentMachine{}
	if err := r.Client.Get(ctx, req.NamespacedName, am); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	helper, err := patch.NewHelper(am, r.Client)
	if err != nil {
		return ctrl.Result{}, fmt.Errorf("create patch helper: %w", err)
	}
	defer func() {
		if err := helper.Patch(ctx, am, patch.WithOwnedConditions{Conditions: ownedConditions}); err != nil {
			retErr = errors.Join(retErr, fmt.Errorf("patch AgentMachine: %w", err))
		}
	}()

	s := &scope{agentMachine: am}
	// Rule 2: no owner Machine yet: report, and wait for the Machine event.
	if s.machine, err = r.ownerMachine(ctx, am); err != nil {
		// A deleting AgentMachine whose Machine is gone was left behind
		// by a removal of the hook whose finalizer removal failed: let
		// it go (upstream L116-124, which also returns the error).
		if apierrors.IsNotFound(err) && !am.DeletionTimestamp.IsZero() {
			ctrl.LoggerFrom(ctx).Info("The owner Machine is gone: removing the finalizer")
			controllerutil.RemoveFinalizer(am, capiagentv1.AgentMachineFinalizerName)
			return ctrl.Result{}, nil
		}
		return ctrl.Result{}, err
	}
	if s.machine == nil {
		ctrl.LoggerFrom(ctx).Info("Waiting for the Machine controller to set the owner reference")
		return ctrl.Result{}, r.reconcileStatus(ctx, s, nil)
	}
	ctx = ctrl.LoggerInto(ctx, ctrl.LoggerFrom(ctx).WithValues("Machine", klog.KObj(s.machine)))

	// Rule 3: the deletion hook comes before the pause.
	if done, result, err := r.reconcileDeleteHook(ctx, s); done || err != nil {
		return result, err
	}
	if isPaused, err := r.paused(ctx, s); isPaused || err != nil {
		return ctrl.Result{}, err
	}
	return ctrl.Result{}, r.reconcileNormal(ctx, s)
}

// scope is what one reconcile works with.
type scope struct {
	agentMachine *capiagentv1.AgentMachine
	machine      *clusterv1.Machine // nil until a Machine owns the AgentMachine
	cluster      *clusterv1.Cluster // nil until read, or when not found
}

// ownerMachine returns the Machine named by an owner reference of kind
// Machine whose apiVersion is exactly cluster.x-k8s.io/v1beta2 or
// cluster.x-k8s.io/v1beta1 (upstream L215-231; util.GetOwnerMachine would
// take any version of the group); nil when there is none. A named Machine
// that cannot be read is an error (upstream L114-127).
func (r *Reconciler) ownerMachine(ctx context.Context, am *capiagentv1.AgentMachine) (*clusterv1.Machine, error) {
	for _, ref := range am.OwnerReferences {
		if ref.Kind != "Machine" || (ref.APIVersion != clusterv1.GroupVersion.String() && ref.APIVersion != machineV1Beta1) {
			continue
		}
		m := &clusterv1.Machine{}
		if err := r.Client.Get(ctx, client.ObjectKey{Namespace: am.Namespace, Name: ref.Name}, m); err != nil {
			return nil, fmt.Errorf("get owner Machine %s: %w", ref.Name, err)
		}
		return m, nil
	}
	return nil, nil
}

// machineV1Beta1 is the older apiVersion of an owner Machine upstream
// still accepts.
const machineV1Beta1 = "cluster.x-k8s.io/v1beta1"

// paused says whether the AgentMachine carries cluster.x-k8s.io/paused:
// "true" (exactly that value, upstream L138-141) or its Cluster is paused.
// Upstream ignores Cluster.spec.paused; the Cluster API contract asks
// infrastructure providers to honour it, and so does this provider.
func (r *Reconciler) paused(ctx context.Context, s *scope) (bool, error) {
	log := ctrl.LoggerFrom(ctx)
	if s.agentMachine.Annotations[clusterv1.PausedAnnotation] == "true" {
		log.V(4).Info("The AgentMachine is paused")
		return true, nil
	}
	if err := r.readCluster(ctx, s); err != nil {
		return false, err
	}
	if s.cluster != nil && s.cluster.Spec.Paused != nil && *s.cluster.Spec.Paused {
		log.V(4).Info("The Cluster is paused", "Cluster", klog.KObj(s.cluster))
		return true, nil
	}
	return false, nil
}
