package agentcluster

import (
	"context"
	"errors"
	"fmt"
	"time"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/cluster-api/util/patch"
	"sigs.k8s.io/cluster-api/util/predicates"

	capiagentv1 "github.com/paritylab/paritylab/providers/agent/api/v1beta1"
)

// +kubebuilder:rbac:groups=capi-provider.agent-install.openshift.io,resources=agentclusters,verbs=get;list;watch;update;patch
// +kubebuilder:rbac:groups=capi-provider.agent-install.openshift.io,resources=agentclusters/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=capi-provider.agent-install.openshift.io,resources=agentclusters/finalizers,verbs=update
// +kubebuilder:rbac:groups=cluster.x-k8s.io,resources=clusters,verbs=get;list;watch
// +kubebuilder:rbac:groups=hypershift.openshift.io,resources=hostedcontrolplanes,verbs=get;list;watch
// +kubebuilder:rbac:groups="",resources=secrets,verbs=get;update

// dependencyWait is how long a reconcile waits for what it cannot watch:
// the Cluster's owner reference and control plane, and the control plane
// endpoint (upstream L46).
const dependencyWait = 5 * time.Second

// Reconciler reconciles AgentClusters. Client is required; the zero value
// of every other field works.
type Reconciler struct {
	// Client reads AgentClusters, Clusters, control planes (unstructured)
	// and Secrets, and writes AgentClusters, ClusterDeployments,
	// AgentClusterInstalls and the labels of Secrets.
	Client client.Client
	// WatchFilterValue, when set, limits reconciliation to AgentClusters
	// labelled cluster.x-k8s.io/watch-filter with this value. Upstream has
	// no such filter; empty (the default) behaves as upstream.
	WatchFilterValue string
}

// SetupWithManager registers the controller. It watches AgentClusters
// only, as upstream does (L441-447): what else it waits for, it polls.
func (r *Reconciler) SetupWithManager(ctx context.Context, mgr ctrl.Manager, opts controller.Options) error {
	if r.Client == nil {
		return errors.New("agentcluster: Client is required")
	}
	err := ctrl.NewControllerManagedBy(mgr).
		For(&capiagentv1.AgentCluster{}, builder.WithPredicates(predicates.ResourceHasFilterLabel(mgr.GetScheme(), ctrl.LoggerFrom(ctx), r.WatchFilterValue))).
		Named("agentcluster").
		WithOptions(opts).
		Complete(r)
	if err != nil {
		return fmt.Errorf("set up AgentCluster controller: %w", err)
	}
	return nil
}

// Reconcile gives an AgentCluster its ClusterDeployment and
// AgentClusterInstall, in upstream's order (L77-159): deletion, finalizer,
// pause, backup label, the ClusterDeployment (found or created, then
// owned), the AgentClusterInstall, and status.ready once the control plane
// endpoint is set.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (_ ctrl.Result, retErr error) {
	ac := &capiagentv1.AgentCluster{}
	if err := r.Client.Get(ctx, req.NamespacedName, ac); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	helper, err := patch.NewHelper(ac, r.Client)
	if err != nil {
		return ctrl.Result{}, fmt.Errorf("create patch helper: %w", err)
	}
	defer func() {
		// Upstream only logs a failed patch (L97-102); returning it retries.
		if err := helper.Patch(ctx, ac); err != nil {
			retErr = errors.Join(retErr, fmt.Errorf("patch AgentCluster: %w", err))
		}
	}()

	if !ac.DeletionTimestamp.IsZero() {
		return ctrl.Result{}, r.reconcileDelete(ctx, ac)
	}
	controllerutil.AddFinalizer(ac, capiagentv1.AgentClusterFinalizerName)
	// Paused (the annotation, exactly "true"): the ClusterDeployment is
	// let go of, so that deleting the AgentCluster, as a move between hubs
	// does, leaves it behind (upstream L116-122).
	if paused(ac) {
		ctrl.LoggerFrom(ctx).Info("The AgentCluster is paused: orphaning its ClusterDeployment")
		return ctrl.Result{}, r.orphanClusterDeployment(ctx, ac)
	}
	return r.reconcileNormal(ctx, ac)
}

// paused says whether the AgentCluster carries cluster.x-k8s.io/paused:
// "true". Unlike the AgentMachine controller, this one ignores
// Cluster.spec.paused, as upstream does: its pause orphans the
// ClusterDeployment, which only the annotation asks for.
func paused(ac *capiagentv1.AgentCluster) bool {
	return ac.Annotations[clusterv1.PausedAnnotation] == "true"
}

// agentClusterGVK is the kind of the owner reference an AgentCluster puts
// on its ClusterDeployment. Upstream takes it from the object's TypeMeta,
// which its cached client fills in (L304-309).
var agentClusterGVK = capiagentv1.GroupVersion.WithKind("AgentCluster")
