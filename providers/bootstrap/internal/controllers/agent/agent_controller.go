package agent

import (
	"context"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/record"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/cluster-api/util/annotations"

	bootstrapv1 "github.com/paritylab/paritylab/providers/bootstrap/api/v1alpha2"
	agentv1 "github.com/paritylab/paritylab/providers/thirdparty/agentinstall/v1beta1"
)

// +kubebuilder:rbac:groups=agent-install.openshift.io,resources=agents,verbs=get;list;watch;update;patch
// +kubebuilder:rbac:groups=agent-install.openshift.io,resources=infraenvs,verbs=get;list;watch
// +kubebuilder:rbac:groups=cluster.x-k8s.io,resources=machines;clusters,verbs=get;list;watch
// +kubebuilder:rbac:groups=bootstrap.cluster.x-k8s.io,resources=openshiftassistedconfigs,verbs=get;list;watch
// +kubebuilder:rbac:groups="",resources=events,verbs=create;patch

// Reconciler reconciles Agents of OpenshiftAssistedConfig Machines.
type Reconciler struct {
	Client client.Client
	// Recorder records why an Agent is left unapproved. Default: the
	// manager's recorder.
	Recorder record.EventRecorder
}

// SetupWithManager registers the controller and its watches.
func (r *Reconciler) SetupWithManager(_ context.Context, mgr ctrl.Manager, opts controller.Options) error {
	if r.Client == nil {
		return errors.New("agent: Client is required")
	}
	if r.Recorder == nil {
		r.Recorder = mgr.GetEventRecorderFor("openshiftassisted-agent")
	}
	hasInfraEnv := predicate.NewPredicateFuncs(func(o client.Object) bool {
		return o.GetLabels()[agentv1.InfraEnvNameLabel] != ""
	})
	err := ctrl.NewControllerManagedBy(mgr).
		For(&agentv1.Agent{}, builder.WithPredicates(hasInfraEnv)).
		Named("openshiftassisted-agent").
		WithOptions(opts).
		Watches(&agentv1.InfraEnv{}, handler.EnqueueRequestsFromMapFunc(r.infraEnvToAgents)).
		// When the approved host goes, another of the Machine's may take over.
		Watches(&agentv1.Agent{}, handler.EnqueueRequestsFromMapFunc(r.agentToSiblings), builder.WithPredicates(deleted)).
		Watches(&clusterv1.Machine{}, handler.EnqueueRequestsFromMapFunc(r.machineToAgents)).
		Complete(r)
	if err != nil {
		return fmt.Errorf("set up Agent controller: %w", err)
	}
	return nil
}

// Reconcile approves and configures an Agent if it is its Machine's.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	agent := &agentv1.Agent{}
	if err := r.Client.Get(ctx, req.NamespacedName, agent); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !agent.DeletionTimestamp.IsZero() {
		return ctrl.Result{}, nil
	}
	s, err := r.newScope(ctx, agent)
	if err != nil || s == nil {
		return ctrl.Result{}, err
	}
	log := ctrl.LoggerFrom(ctx).WithValues("Machine", s.machine.Namespace+"/"+s.machine.Name, "InfraEnv", s.infraEnv.Name)
	ctx = ctrl.LoggerInto(ctx, log)
	if s.paused() {
		log.V(4).Info("Reconciliation is paused")
		return ctrl.Result{}, nil
	}
	if !s.machine.DeletionTimestamp.IsZero() {
		return ctrl.Result{}, nil
	}
	chosen, err := r.chooseAgent(ctx, s)
	if err != nil {
		return ctrl.Result{}, err
	}
	if chosen.Name != agent.Name {
		r.Recorder.Eventf(agent, corev1.EventTypeNormal, "NotApproved",
			"Agent %s already is the host of Machine %s; this Agent stays unapproved", chosen.Name, s.machine.Name)
		return ctrl.Result{}, nil
	}
	return ctrl.Result{}, r.configure(ctx, s)
}

// scope is what one reconcile works with.
type scope struct {
	agent    *agentv1.Agent
	infraEnv *agentv1.InfraEnv
	config   *bootstrapv1.OpenshiftAssistedConfig
	machine  *clusterv1.Machine
	cluster  *clusterv1.Cluster // nil if gone
}

func (s *scope) paused() bool {
	return annotations.HasPaused(s.config) || (s.cluster != nil && s.cluster.Spec.Paused != nil && *s.cluster.Spec.Paused)
}

// newScope traces an Agent to its Machine; nil when the Agent is not the
// host of an OpenshiftAssistedConfig Machine (another flow's InfraEnv) or
// the Machine is gone.
func (r *Reconciler) newScope(ctx context.Context, agent *agentv1.Agent) (*scope, error) {
	s := &scope{agent: agent, infraEnv: &agentv1.InfraEnv{}}
	key := client.ObjectKey{Namespace: agent.Namespace, Name: agent.Labels[agentv1.InfraEnvNameLabel]}
	if err := r.Client.Get(ctx, key, s.infraEnv); err != nil {
		return nil, client.IgnoreNotFound(err)
	}
	configRef := metav1.GetControllerOf(s.infraEnv)
	if configRef == nil || configRef.Kind != "OpenshiftAssistedConfig" || !isGroup(configRef, bootstrapv1.GroupVersion.Group) {
		return nil, nil
	}
	s.config = &bootstrapv1.OpenshiftAssistedConfig{}
	if err := r.Client.Get(ctx, client.ObjectKey{Namespace: agent.Namespace, Name: configRef.Name}, s.config); err != nil {
		return nil, client.IgnoreNotFound(err)
	}
	for _, ref := range s.infraEnv.OwnerReferences {
		if ref.Kind == "Machine" && isGroup(&ref, clusterv1.GroupVersion.Group) {
			s.machine = &clusterv1.Machine{}
			if err := r.Client.Get(ctx, client.ObjectKey{Namespace: agent.Namespace, Name: ref.Name}, s.machine); err != nil {
				return nil, client.IgnoreNotFound(err)
			}
		}
	}
	if s.machine == nil {
		return nil, nil
	}
	cluster := &clusterv1.Cluster{}
	err := r.Client.Get(ctx, client.ObjectKey{Namespace: agent.Namespace, Name: s.machine.Spec.ClusterName}, cluster)
	switch {
	case err == nil:
		s.cluster = cluster
	case !apierrors.IsNotFound(err):
		return nil, fmt.Errorf("get Cluster: %w", err)
	}
	return s, nil
}

func isGroup(ref *metav1.OwnerReference, group string) bool {
	gv, err := schemaGroup(ref.APIVersion)
	return err == nil && gv == group
}

// deleted passes delete events only.
var deleted = predicate.Funcs{
	CreateFunc:  func(event.CreateEvent) bool { return false },
	UpdateFunc:  func(event.UpdateEvent) bool { return false },
	GenericFunc: func(event.GenericEvent) bool { return false },
}

// agentToSiblings maps an Agent to the other Agents of its InfraEnv.
func (r *Reconciler) agentToSiblings(ctx context.Context, o client.Object) []reconcile.Request {
	name := o.GetLabels()[agentv1.InfraEnvNameLabel]
	if name == "" {
		return nil
	}
	return r.agentsOf(ctx, o.GetNamespace(), name)
}

// infraEnvToAgents maps an InfraEnv to the Agents that booted it.
func (r *Reconciler) infraEnvToAgents(ctx context.Context, o client.Object) []reconcile.Request {
	return r.agentsOf(ctx, o.GetNamespace(), o.GetName())
}

// machineToAgents maps an OpenshiftAssistedConfig Machine to the Agents of
// its InfraEnv (named after it), e.g. when its provider ID appears.
func (r *Reconciler) machineToAgents(ctx context.Context, o client.Object) []reconcile.Request {
	m, ok := o.(*clusterv1.Machine)
	if !ok || m.Spec.Bootstrap.ConfigRef.Kind != "OpenshiftAssistedConfig" {
		return nil
	}
	return r.agentsOf(ctx, m.Namespace, m.Name)
}

func (r *Reconciler) agentsOf(ctx context.Context, namespace, infraEnv string) []reconcile.Request {
	list := &agentv1.AgentList{}
	if err := r.Client.List(ctx, list, client.InNamespace(namespace), client.MatchingLabels{agentv1.InfraEnvNameLabel: infraEnv}); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "List Agents of an InfraEnv", "InfraEnv", infraEnv)
		return nil
	}
	out := make([]reconcile.Request, 0, len(list.Items))
	for i := range list.Items {
		out = append(out, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&list.Items[i])})
	}
	return out
}
