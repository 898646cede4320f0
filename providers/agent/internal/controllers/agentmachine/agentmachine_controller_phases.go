package agentmachine

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	capiagentv1 "github.com/paritylab/paritylab/providers/agent/api/v1beta1"
	agentv1 "github.com/paritylab/paritylab/providers/thirdparty/agentinstall/v1beta1"
)

// reconcileNormal runs the phases after the pause check (upstream
// L143-181). Failures to find or bind an Agent become the AgentReserved
// condition rather than errors, as upstream's do.
func (r *Reconciler) reconcileNormal(ctx context.Context, s *scope) error {
	am := s.agentMachine
	if !metav1.HasLabel(am.ObjectMeta, capiagentv1.BackupLabel) {
		metav1.SetMetaDataLabel(&am.ObjectMeta, capiagentv1.BackupLabel, capiagentv1.BackupLabelValue)
	}
	data, err := r.reconcileBootstrapData(ctx, s)
	if err != nil {
		return err
	}
	// Rule 3: a ready AgentMachine is left alone past its bootstrap data.
	if am.Status.Ready {
		return nil
	}
	ac, err := r.agentCluster(ctx, s)
	if err != nil {
		return err
	}
	cdRef := ac.Status.ClusterDeploymentRef
	if cdRef.Name == "" {
		return r.reconcileStatus(ctx, s, fmt.Errorf("AgentCluster %s has no ClusterDeployment reference yet", ac.Name))
	}
	if am.Status.AgentRef == nil {
		agent, err := r.reconcileAgent(ctx, s, cdRef, data)
		if agent == nil || err != nil {
			return r.reconcileStatus(ctx, s, err)
		}
		setAgentRef(am, agent)
	}
	if err := r.reconcileAgentSpec(ctx, s, data); err != nil {
		// Upstream reports this through the status only (L176-180): with an
		// Agent reserved, the status shows the Agent's own conditions.
		ctrl.LoggerFrom(ctx).Error(err, "Re-sync the Agent's spec", "Agent", am.Status.AgentRef.Namespace+"/"+am.Status.AgentRef.Name)
		return r.reconcileStatus(ctx, s, err)
	}
	return r.reconcileStatus(ctx, s, nil)
}

// readCluster reads the Cluster named by the Machine's cluster-name label
// into s.cluster (upstream L375-385 reads it by that label, not by
// spec.clusterName); s.cluster stays nil without the label or the Cluster.
func (r *Reconciler) readCluster(ctx context.Context, s *scope) error {
	name := s.machine.Labels[clusterv1.ClusterNameLabel]
	if name == "" || s.cluster != nil {
		return nil
	}
	c := &clusterv1.Cluster{}
	err := r.Client.Get(ctx, client.ObjectKey{Namespace: s.machine.Namespace, Name: name}, c)
	switch {
	case apierrors.IsNotFound(err):
		return nil
	case err != nil:
		return fmt.Errorf("get Cluster %s: %w", name, err)
	}
	s.cluster = c
	return nil
}

// agentCluster returns the AgentCluster the Machine's Cluster names as its
// infrastructure (rule 4, upstream L387-402).
func (r *Reconciler) agentCluster(ctx context.Context, s *scope) (*capiagentv1.AgentCluster, error) {
	name := s.machine.Labels[clusterv1.ClusterNameLabel]
	if name == "" {
		return nil, fmt.Errorf("machine %s has no %s label", s.machine.Name, clusterv1.ClusterNameLabel)
	}
	if err := r.readCluster(ctx, s); err != nil {
		return nil, err
	}
	if s.cluster == nil {
		return nil, fmt.Errorf("get Cluster %s: not found", name)
	}
	ac := &capiagentv1.AgentCluster{}
	key := client.ObjectKey{Namespace: s.cluster.Namespace, Name: s.cluster.Spec.InfrastructureRef.Name}
	if err := r.Client.Get(ctx, key, ac); err != nil {
		return nil, fmt.Errorf("get AgentCluster %s of Cluster %s: %w", key.Name, s.cluster.Name, err)
	}
	return ac, nil
}

// reconcileAgent finds the Agent for an AgentMachine that has none (rule 5,
// upstream L404-460): an Agent already labelled for it (a restored hub, or
// a bind interrupted before status.agentRef was written) is taken back as
// it is; else the first eligible unlabelled Agent matching the selector
// that binds. nil, nil when no Agent is eligible.
func (r *Reconciler) reconcileAgent(ctx context.Context, s *scope, cdRef capiagentv1.ClusterDeploymentReference, data *bootstrapData) (*agentv1.Agent, error) {
	log := ctrl.LoggerFrom(ctx)
	restored, err := r.agentLabelledFor(ctx, s.agentMachine)
	if err != nil || restored != nil {
		if restored != nil {
			log.Info("Re-associating the Agent labelled for this AgentMachine", "Agent", klog.KObj(restored))
		}
		return restored, err
	}

	selector := labels.NewSelector()
	if sel := s.agentMachine.Spec.AgentLabelSelector; sel != nil {
		if selector, err = metav1.LabelSelectorAsSelector(sel); err != nil {
			return nil, fmt.Errorf("parse agentLabelSelector: %w", err)
		}
	}
	unlabelled, err := labels.NewRequirement(capiagentv1.AgentMachineRefLabelKey, selection.DoesNotExist, nil)
	if err != nil {
		return nil, fmt.Errorf("select unbound Agents: %w", err)
	}
	agents, err := r.listAgents(ctx, selector.Add(*unlabelled))
	if err != nil {
		return nil, err
	}
	for i := range agents {
		agent := &agents[i]
		if !eligible(agent) {
			continue
		}
		// Another AgentMachine may have taken it since it was listed: the
		// update then conflicts, and the next Agent is tried (L443-448).
		if err := r.bind(ctx, s.agentMachine, agent, cdRef, data); err != nil {
			log.Info("Could not bind an Agent, trying the next", "Agent", klog.KObj(agent), "error", err.Error())
			continue
		}
		log.Info("Bound an Agent", "Agent", klog.KObj(agent))
		return agent, nil
	}
	log.Info("No eligible Agent could be bound")
	return nil, nil
}

// agentLabelledFor returns an Agent labelled agentMachineRef=<AgentMachine
// name>, or nil (upstream L466-489). The label holds the name only, so an
// AgentMachine of the same name in another namespace matches too, as
// upstream's does.
func (r *Reconciler) agentLabelledFor(ctx context.Context, am *capiagentv1.AgentMachine) (*agentv1.Agent, error) {
	agents, err := r.listAgents(ctx, labels.SelectorFromSet(labels.Set{capiagentv1.AgentMachineRefLabelKey: am.Name}))
	if err != nil || len(agents) == 0 {
		return nil, err
	}
	return &agents[0], nil
}

// listAgents lists the Agents of AgentNamespace (every namespace when
// unset) matching selector.
func (r *Reconciler) listAgents(ctx context.Context, selector labels.Selector) ([]agentv1.Agent, error) {
	reader := r.agents
	if reader == nil {
		reader = r.Client
	}
	list := &agentv1.AgentList{}
	if err := reader.List(ctx, list, client.InNamespace(r.AgentNamespace), client.MatchingLabelsSelector{Selector: selector}); err != nil {
		return nil, fmt.Errorf("list Agents: %w", err)
	}
	return list.Items, nil
}

// eligible says whether an Agent may be bound (rule 6, upstream L604-623):
// approved, Validated and Connected True, and Bound False. A missing
// condition counts as not satisfied.
func eligible(agent *agentv1.Agent) bool {
	var validated, connected, unbound bool
	for _, c := range agent.Status.Conditions {
		switch c.Type {
		case agentv1.ConditionValidated:
			validated = c.Status == corev1.ConditionTrue
		case agentv1.ConditionConnected:
			connected = c.Status == corev1.ConditionTrue
		case agentv1.ConditionBound:
			unbound = c.Status == corev1.ConditionFalse
		}
	}
	return agent.Spec.Approved && validated && connected && unbound
}

// bind writes everything that binds an Agent to an AgentMachine in one
// update (rule 7, upstream L498-520).
func (r *Reconciler) bind(ctx context.Context, am *capiagentv1.AgentMachine, agent *agentv1.Agent, cdRef capiagentv1.ClusterDeploymentReference, data *bootstrapData) error {
	metav1.SetMetaDataLabel(&agent.ObjectMeta, capiagentv1.AgentMachineRefLabelKey, am.Name)
	metav1.SetMetaDataAnnotation(&agent.ObjectMeta, capiagentv1.AgentMachineRefNamespace, am.Namespace)
	agent.Spec.ClusterDeploymentName = &agentv1.ClusterReference{Namespace: cdRef.Namespace, Name: cdRef.Name}
	data.applyTo(&agent.Spec)
	if err := r.Client.Update(ctx, agent); err != nil {
		return fmt.Errorf("bind Agent %s: %w", agent.Name, err)
	}
	return nil
}

// reconcileAgentSpec re-syncs the bound Agent's machine config pool, token
// reference and headers when they drift from the bootstrap data (rule 10,
// upstream L184-213), comparing as upstream does: a whole AgentSpec
// holding only the bootstrap data against the Agent's, with apiequality's
// DeepDerivative. That ignores empty strings, maps and pointers of the
// desired spec but compares booleans exactly, so the desired
// approved=false never matches an approved Agent: in effect the three
// fields are rewritten on every reconcile until the AgentMachine is ready,
// and headers the bootstrap data does not name are dropped. (The update
// changes nothing on the server when they already match.)
func (r *Reconciler) reconcileAgentSpec(ctx context.Context, s *scope, data *bootstrapData) error {
	agent, err := r.boundAgent(ctx, s.agentMachine)
	if err != nil {
		return err
	}
	desired := agentv1.AgentSpec{}
	data.applyTo(&desired)
	if apiequality.Semantic.DeepDerivative(desired, agent.Spec) {
		return nil
	}
	ctrl.LoggerFrom(ctx).Info("Re-syncing the Agent's spec with the bootstrap data", "Agent", klog.KObj(agent))
	data.applyTo(&agent.Spec)
	if err := r.Client.Update(ctx, agent); err != nil {
		return fmt.Errorf("re-sync Agent %s: %w", agent.Name, err)
	}
	return nil
}

// boundAgent reads the Agent status.agentRef names, past any cache.
func (r *Reconciler) boundAgent(ctx context.Context, am *capiagentv1.AgentMachine) (*agentv1.Agent, error) {
	reader := r.APIReader
	if reader == nil {
		reader = r.Client
	}
	ref := am.Status.AgentRef
	agent := &agentv1.Agent{}
	if err := reader.Get(ctx, client.ObjectKey{Namespace: ref.Namespace, Name: ref.Name}, agent); err != nil {
		return nil, fmt.Errorf("get Agent %s/%s: %w", ref.Namespace, ref.Name, err)
	}
	return agent, nil
}
