package openshiftassistedcontrolplane

import (
	"context"
	"errors"
	"fmt"
	"time"

	hivev1 "github.com/openshift/hive/apis/hive/v1"
	"k8s.io/apimachinery/pkg/labels"
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

	controlplanev1 "github.com/paritylab/paritylab/providers/controlplane/api/v1alpha3"
	"github.com/paritylab/paritylab/providers/controlplane/release"
	agentv1 "github.com/paritylab/paritylab/providers/thirdparty/agentinstall/v1beta1"
	hiveextv1 "github.com/paritylab/paritylab/providers/thirdparty/hiveextensions/v1beta1"
)

// Finalizer holds a control plane until its cluster-scoped
// ClusterImageSet is removed.
const Finalizer = "openshiftassistedcontrolplane.controlplane.cluster.x-k8s.io/deprovision"

// defaultRetryAfter is how soon what sends no event (registries, the
// workload cluster) is looked at again.
const defaultRetryAfter = 30 * time.Second

// +kubebuilder:rbac:groups=controlplane.cluster.x-k8s.io,resources=openshiftassistedcontrolplanes;openshiftassistedcontrolplanes/status;openshiftassistedcontrolplanes/finalizers,verbs=get;list;watch;update;patch
// +kubebuilder:rbac:groups=cluster.x-k8s.io,resources=clusters;machinedeployments,verbs=get;list;watch
// +kubebuilder:rbac:groups=cluster.x-k8s.io,resources=machines;machines/status,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=bootstrap.cluster.x-k8s.io,resources=openshiftassistedconfigs,verbs=get;list;watch;create;delete
// +kubebuilder:rbac:groups=infrastructure.cluster.x-k8s.io,resources=*,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=hive.openshift.io,resources=clusterdeployments;clusterimagesets,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=extensions.hive.openshift.io,resources=agentclusterinstalls,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups="",resources=secrets,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups="",resources=configmaps,verbs=get;list;watch;create;update;patch
// +kubebuilder:rbac:groups="",resources=events,verbs=create;patch
// +kubebuilder:rbac:groups=apiextensions.k8s.io,resources=customresourcedefinitions,verbs=get;list;watch

// WorkloadClient returns a client of a Cluster's workload cluster.
type WorkloadClient func(ctx context.Context, cluster *clusterv1.Cluster) (client.Client, error)

// Reconciler reconciles OpenshiftAssistedControlPlanes.
type Reconciler struct {
	Client client.Client
	// Releases reads release images. Default: from their registries.
	Releases release.Resolver
	// Workload reaches the installed cluster. Default: through the
	// <cluster>-kubeconfig Secret.
	Workload WorkloadClient
	// WatchFilterValue, when set, limits reconciliation to objects labelled
	// cluster.x-k8s.io/watch-filter with this value.
	WatchFilterValue string
	// RetryAfter is how soon registries and the workload cluster are asked
	// again. Default 30s.
	RetryAfter time.Duration
}

// SetupWithManager registers the controller and its watches.
func (r *Reconciler) SetupWithManager(ctx context.Context, mgr ctrl.Manager, opts controller.Options) error {
	if r.Client == nil {
		return errors.New("openshiftassistedcontrolplane: Client is required")
	}
	if r.Releases == nil {
		r.Releases = &release.Remote{}
	}
	if r.Workload == nil {
		r.Workload = KubeconfigClient(r.Client)
	}
	if r.RetryAfter == 0 {
		r.RetryAfter = defaultRetryAfter
	}
	log := ctrl.LoggerFrom(ctx)
	err := ctrl.NewControllerManagedBy(mgr).
		For(&controlplanev1.OpenshiftAssistedControlPlane{}).
		Named("openshiftassistedcontrolplane").
		WithOptions(opts).
		WithEventFilter(predicates.ResourceHasFilterLabel(mgr.GetScheme(), log, r.WatchFilterValue)).
		Owns(&clusterv1.Machine{}).
		Owns(&hivev1.ClusterDeployment{}).
		Owns(&hiveextv1.AgentClusterInstall{}).
		Watches(&clusterv1.Cluster{}, handler.EnqueueRequestsFromMapFunc(r.clusterToControlPlane)).
		Watches(&clusterv1.MachineDeployment{}, handler.EnqueueRequestsFromMapFunc(r.machineDeploymentToControlPlane)).
		Complete(r)
	if err != nil {
		return fmt.Errorf("set up OpenshiftAssistedControlPlane controller: %w", err)
	}
	return nil
}

// Reconcile brings one control plane closer to its spec.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (_ ctrl.Result, retErr error) {
	cp := &controlplanev1.OpenshiftAssistedControlPlane{}
	if err := r.Client.Get(ctx, req.NamespacedName, cp); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	cluster, err := util.GetOwnerCluster(ctx, r.Client, cp.ObjectMeta)
	if client.IgnoreNotFound(err) != nil {
		return ctrl.Result{}, fmt.Errorf("get owner Cluster: %w", err)
	}
	if cluster != nil {
		ctx = ctrl.LoggerInto(ctx, ctrl.LoggerFrom(ctx).WithValues("Cluster", cluster.Namespace+"/"+cluster.Name))
	}
	if isPaused, requeue, err := paused.EnsurePausedCondition(ctx, r.Client, cluster, cp); err != nil || isPaused || requeue {
		return ctrl.Result{}, err
	}

	helper, err := patch.NewHelper(cp, r.Client)
	if err != nil {
		return ctrl.Result{}, fmt.Errorf("create patch helper: %w", err)
	}
	s := &scope{cp: cp, cluster: cluster}
	defer func() {
		if err := r.updateStatus(ctx, s); err != nil {
			retErr = errors.Join(retErr, err)
		}
		opts := []patch.Option{patch.WithOwnedConditions{Conditions: ownedConditions}}
		if retErr == nil {
			opts = append(opts, patch.WithStatusObservedGeneration{})
		}
		if err := helper.Patch(ctx, cp, opts...); err != nil {
			retErr = errors.Join(retErr, fmt.Errorf("patch OpenshiftAssistedControlPlane: %w", err))
		}
	}()

	if !cp.DeletionTimestamp.IsZero() {
		return r.reconcileDelete(ctx, s)
	}
	if cluster == nil {
		setWaitingForCluster(cp)
		return ctrl.Result{}, nil
	}
	if controllerutil.AddFinalizer(cp, Finalizer) {
		return ctrl.Result{}, nil
	}
	return r.reconcileNormal(ctx, s)
}

// scope is what one reconcile works with.
type scope struct {
	cp      *controlplanev1.OpenshiftAssistedControlPlane
	cluster *clusterv1.Cluster // nil until the Cluster owns the control plane
	// machines are the control plane's Machines; nil until listed.
	machines []*clusterv1.Machine
	aci      *hiveextv1.AgentClusterInstall // nil until created
	// target is the release of spec.distributionVersion; empty Image
	// while unknown.
	target release.Info
	// targetImage is the release image by tag.
	targetImage string
	// targetErr says why target is unknown.
	targetErr error
	// upgrading says an update of the installed cluster is under way.
	upgrading bool
}

// selector selects the control plane's Machines.
func selector(cp *controlplanev1.OpenshiftAssistedControlPlane, clusterName string) labels.Selector {
	return labels.SelectorFromSet(machineLabels(cp, clusterName))
}

// aciConsumerLabel is assisted-service's label naming the kind of object
// that manages an AgentClusterInstall (hiveextension API,
// ClusterConsumerLabel); controlPlaneKind is ours.
const (
	aciConsumerLabel = "agentclusterinstalls.agent-install.openshift.io/consumer"
	controlPlaneKind = "OpenshiftAssistedControlPlane"
)

// machineRoleAnnotations are on every control-plane Machine, as CAPOA puts
// them: BMAC's role annotation, valued master.
var machineRoleAnnotations = map[string]string{agentv1.BMACRoleAnnotation: string(agentv1.HostRoleMaster)}

func machineLabels(cp *controlplanev1.OpenshiftAssistedControlPlane, clusterName string) map[string]string {
	return map[string]string{
		clusterv1.ClusterNameLabel:             clusterName,
		clusterv1.MachineControlPlaneLabel:     "",
		clusterv1.MachineControlPlaneNameLabel: cp.Name,
	}
}

// clusterToControlPlane maps a Cluster to the control plane it references.
func (r *Reconciler) clusterToControlPlane(_ context.Context, o client.Object) []reconcile.Request {
	c, ok := o.(*clusterv1.Cluster)
	if !ok {
		return nil
	}
	ref := c.Spec.ControlPlaneRef
	if ref.Kind != "OpenshiftAssistedControlPlane" || ref.APIGroup != controlplanev1.GroupVersion.Group {
		return nil
	}
	return []reconcile.Request{{NamespacedName: client.ObjectKey{Namespace: c.Namespace, Name: ref.Name}}}
}

// machineDeploymentToControlPlane maps a MachineDeployment to its cluster's
// control plane, whose install counts the workers.
func (r *Reconciler) machineDeploymentToControlPlane(ctx context.Context, o client.Object) []reconcile.Request {
	md, ok := o.(*clusterv1.MachineDeployment)
	if !ok {
		return nil
	}
	cluster := &clusterv1.Cluster{}
	if err := r.Client.Get(ctx, client.ObjectKey{Namespace: md.Namespace, Name: md.Spec.ClusterName}, cluster); err != nil {
		return nil
	}
	return r.clusterToControlPlane(ctx, cluster)
}
