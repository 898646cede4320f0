package assisted

import (
	"context"
	"fmt"
	"strings"
	"time"

	bmov1alpha1 "github.com/metal3-io/baremetal-operator/apis/metal3.io/v1alpha1"
	conditionsv1 "github.com/openshift/custom-resource-status/conditions/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	agentv1beta1 "github.com/paritylab/paritylab/providers/thirdparty/agentinstall/v1beta1"
	hiveextv1beta1 "github.com/paritylab/paritylab/providers/thirdparty/hiveextensions/v1beta1"
)

// connectivityRecheck is how often an Agent's Connected condition is
// re-evaluated without other changes.
const connectivityRecheck = 30 * time.Second

func (s *Service) setupAgentController(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).Named("assisted-agent").
		For(&agentv1beta1.Agent{}).
		Complete(reconcile.Func(s.reconcileAgent))
}

// installStates are the states of a host whose install started; the Agent
// controller leaves them to the install flow.
var installStates = map[string]bool{
	agentv1beta1.AgentStatePreparingForInstallation: true, agentv1beta1.AgentStateInstalling: true,
	agentv1beta1.AgentStateInstallingInProgress: true, agentv1beta1.AgentStateInstalled: true,
	agentv1beta1.AgentStateAddedToExistingCluster: true, agentv1beta1.AgentStateError: true,
}

func (s *Service) reconcileAgent(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	agent := &agentv1beta1.Agent{}
	if err := s.client.Get(ctx, req.NamespacedName, agent); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if done, err := s.handleAgentDeletion(ctx, agent); done || err != nil {
		return ctrl.Result{}, err
	}
	if changed, err := s.bindToBMH(ctx, agent); err != nil || changed {
		return ctrl.Result{}, err // the update triggers another reconcile
	}
	before := agent.Status.DeepCopy()
	if unbindInstalled(agent) {
		s.events.add(agent.Namespace, agent.Name, "Host %s: unbound from its cluster; waiting for it to boot the discovery image", hostname(agent))
	}
	aci, err := s.aciOfAgent(ctx, agent)
	if err != nil {
		return ctrl.Result{}, err
	}
	peers, err := s.boundAgents(ctx, agent.Spec.ClusterDeploymentName)
	if err != nil {
		return ctrl.Result{}, err
	}
	s.computeAgentStatus(agent, aci, peers)
	s.syncIgnitionToken(ctx, agent)
	recheck, err := s.approveCSRsIfDue(ctx, agent, aci)
	if err != nil {
		return ctrl.Result{}, err
	}
	if !equality.Semantic.DeepEqual(before, &agent.Status) {
		if err := s.client.Status().Update(ctx, agent); err != nil {
			return ctrl.Result{}, err
		}
	}
	return ctrl.Result{RequeueAfter: recheck}, nil
}

// csrRecheck is how soon a host whose CSR the service waits for is looked
// at again (upstream's ApproveCsrsRequeueDuration is a minute; the lab's
// nodes ask within seconds of booting).
const csrRecheck = 5 * time.Second

// approveCSRsIfDue approves a day-2 host's CSRs when the service does so
// and says when to look at the Agent again. A cluster that cannot be
// reached is retried, as upstream logs and retries it.
func (s *Service) approveCSRsIfDue(ctx context.Context, a *agentv1beta1.Agent, aci *hiveextv1beta1.AgentClusterInstall) (time.Duration, error) {
	due, err := s.approvesCSRsOf(ctx, a, aci)
	if err != nil || !due {
		return connectivityRecheck, err
	}
	waiting, err := s.approveDay2CSRs(ctx, a)
	if err != nil {
		s.opts.Logger.Error(err, "Approve day-2 CSRs", "agent", a.Name)
		return csrRecheck, nil
	}
	if waiting {
		return csrRecheck, nil
	}
	return connectivityRecheck, nil
}

// effectiveRole is the role the host installs with: its spec, else the one
// the cluster assigned.
func effectiveRole(a *agentv1beta1.Agent) agentv1beta1.HostRole {
	if a.Spec.Role != "" && a.Spec.Role != agentv1beta1.HostRoleAutoAssign {
		return a.Spec.Role
	}
	if a.Status.Role != "" {
		return a.Status.Role
	}
	return agentv1beta1.HostRoleAutoAssign
}

func (s *Service) requirementsFor(role agentv1beta1.HostRole, aci *hiveextv1beta1.AgentClusterInstall) RoleRequirements {
	reqs := s.opts.Requirements
	if role != agentv1beta1.HostRoleMaster {
		return reqs.Worker
	}
	if aci != nil && aci.Spec.ProvisionRequirements.ControlPlaneAgents == 1 && aci.Spec.ProvisionRequirements.WorkerAgents == 0 {
		return reqs.SNO
	}
	return reqs.Master
}

// computeAgentStatus fills validations, conditions and (before install)
// the state from what is known of the host.
func (s *Service) computeAgentStatus(a *agentv1beta1.Agent, aci *hiveextv1beta1.AgentClusterInstall, peers []agentv1beta1.Agent) {
	role := effectiveRole(a)
	a.Status.Role = role
	if disk := installDisk(a); disk.ID != "" {
		a.Status.InstallationDiskID = disk.ID
	}
	connected := s.connected(a.Name) || installStates[a.Status.DebugInfo.State]
	in := validationInput{agent: a, role: role, min: s.requirementsFor(role, aci), connected: connected, peers: peers}
	if aci != nil {
		n := networkingOf(aci).withHosts(append([]agentv1beta1.Agent{*a}, peers...))
		in.networking = &n
	}
	a.Status.ValidationsInfo = validate(in)
	failed, pending := failing(a.Status.ValidationsInfo)
	bound := a.Spec.ClusterDeploymentName != nil && a.Spec.ClusterDeploymentName.Name != ""
	set := func(t conditionsv1.ConditionType, ok bool, reason, msg string) {
		status := corev1.ConditionFalse
		if ok {
			status = corev1.ConditionTrue
		}
		conditionsv1.SetStatusConditionNoHeartbeat(&a.Status.Conditions, conditionsv1.Condition{Type: t, Status: status, Reason: reason, Message: msg})
	}
	set(agentv1beta1.ConditionSpecSynced, true, agentv1beta1.ReasonSyncOK, "The Spec has been successfully applied")
	set(agentv1beta1.ConditionConnected, connected, map[bool]string{true: agentv1beta1.ReasonAgentConnected, false: agentv1beta1.ReasonAgentDisconnected}[connected],
		map[bool]string{true: "The agent's connection to the installation service is unimpaired", false: "The agent has not contacted the installation service recently"}[connected])
	validated := len(failed) == 0 && len(pending) == 0
	switch {
	case validated:
		set(agentv1beta1.ConditionValidated, true, agentv1beta1.ReasonValidationsPassing, "The agent's validations are passing")
	case len(failed) > 0:
		set(agentv1beta1.ConditionValidated, false, agentv1beta1.ReasonValidationsFailing, "The agent's validations are failing: "+strings.Join(failed, "; "))
	default:
		set(agentv1beta1.ConditionValidated, false, agentv1beta1.ReasonValidationsUnknown, "The agent's validations have not run yet: waiting for "+strings.Join(pending, ", "))
	}
	s.setProgressConditions(a, validated, bound, set)
	ok, reason, msg := boundCondition(a.Status.DebugInfo.State, bound)
	set(agentv1beta1.ConditionBound, ok, reason, msg)
}

// setProgressConditions sets RequirementsMet, Installed and the state.
func (s *Service) setProgressConditions(a *agentv1beta1.Agent, validated, bound bool, set func(conditionsv1.ConditionType, bool, string, string)) {
	stage := a.Status.Progress.CurrentStage
	state := a.Status.DebugInfo.State
	switch {
	case stage == agentv1beta1.HostStageDone:
		state = agentv1beta1.AgentStateInstalled
		if a.Status.Kind == agentv1beta1.HostKindAddToExistingClusterHost {
			state = agentv1beta1.AgentStateAddedToExistingCluster
		}
		set(agentv1beta1.ConditionInstalled, true, agentv1beta1.ReasonInstallationCompleted, "The installation has completed: "+string(stage))
		set(agentv1beta1.ConditionRequirementsMet, true, agentv1beta1.ReasonAgentAlreadyInstalling, "Installation already started and is in progress")
	case stage == agentv1beta1.HostStageFailed:
		state = agentv1beta1.AgentStateError
		set(agentv1beta1.ConditionInstalled, false, agentv1beta1.ReasonInstallationFailed, "The installation failed: "+a.Status.Progress.ProgressInfo)
	case stage != "" || installStates[state]:
		if stage != "" {
			state = agentv1beta1.AgentStateInstallingInProgress
		}
		set(agentv1beta1.ConditionInstalled, false, agentv1beta1.ReasonInstallationInProgress, "Installation in progress: "+string(stage))
		set(agentv1beta1.ConditionRequirementsMet, true, agentv1beta1.ReasonAgentAlreadyInstalling, "Installation already started and is in progress")
	case state == agentv1beta1.AgentStateUnbindingPendingUserAction && !bound:
		unbindingConditions(set)
	default:
		state = preInstallState(a, validated, bound)
		set(agentv1beta1.ConditionInstalled, false, agentv1beta1.ReasonInstallationNotStarted, "The installation has not yet started")
		switch {
		case !validated:
			set(agentv1beta1.ConditionRequirementsMet, false, agentv1beta1.ReasonAgentNotReady, "The agent is not ready to begin the installation: its validations are not passing")
		case !a.Spec.Approved:
			set(agentv1beta1.ConditionRequirementsMet, false, agentv1beta1.ReasonAgentNotApproved, "The agent is not approved: set spec.approved")
		default:
			set(agentv1beta1.ConditionRequirementsMet, true, agentv1beta1.ReasonAgentReady, "The agent is ready to begin the installation")
		}
	}
	a.Status.DebugInfo.State = state
}

func preInstallState(a *agentv1beta1.Agent, validated, bound bool) string {
	var state string
	switch {
	case a.Status.Inventory.CPU.Count == 0:
		state = agentv1beta1.AgentStateDiscovering
	case !validated:
		state = agentv1beta1.AgentStateInsufficient
	default:
		state = agentv1beta1.AgentStateKnown
	}
	if !bound {
		state += "-unbound"
	}
	return state
}

// aciOfAgent is the AgentClusterInstall of the Agent's ClusterDeployment.
func (s *Service) aciOfAgent(ctx context.Context, a *agentv1beta1.Agent) (*hiveextv1beta1.AgentClusterInstall, error) {
	ref := a.Spec.ClusterDeploymentName
	if ref == nil || ref.Name == "" {
		return nil, nil
	}
	return s.aciOfCluster(ctx, ClusterKey{Namespace: ref.Namespace, Name: ref.Name})
}

func (s *Service) aciOfCluster(ctx context.Context, key ClusterKey) (*hiveextv1beta1.AgentClusterInstall, error) {
	list := &hiveextv1beta1.AgentClusterInstallList{}
	if err := s.client.List(ctx, list, client.InNamespace(key.Namespace)); err != nil {
		return nil, err
	}
	for i := range list.Items {
		if list.Items[i].Spec.ClusterDeploymentRef.Name == key.Name {
			return &list.Items[i], nil
		}
	}
	return nil, nil
}

// boundAgents lists the agents bound to a ClusterDeployment.
func (s *Service) boundAgents(ctx context.Context, ref *agentv1beta1.ClusterReference) ([]agentv1beta1.Agent, error) {
	if ref == nil || ref.Name == "" {
		return nil, nil
	}
	list := &agentv1beta1.AgentList{}
	if err := s.client.List(ctx, list); err != nil {
		return nil, err
	}
	var out []agentv1beta1.Agent
	for _, a := range list.Items {
		if r := a.Spec.ClusterDeploymentName; r != nil && r.Name == ref.Name && r.Namespace == ref.Namespace && a.DeletionTimestamp.IsZero() {
			out = append(out, a)
		}
	}
	return out, nil
}

// BMAC annotations on a BareMetalHost that configure its Agent.
const (
	bmhHostnameAnnotation = "bmac.agent-install.openshift.io/hostname"
	bmhRoleAnnotation     = "bmac.agent-install.openshift.io/role"
	bmhDiskAnnotation     = "bmac.agent-install.openshift.io/installation-disk-id"
)

// bindToBMH links an Agent to the BareMetalHost it booted on (by MAC), as
// assisted-service's BMAC does: label it, take hostname, role and disk from
// the host's annotations, and approve it (the host is declared intent).
// Like BMAC it acts only on hosts labelled with an InfraEnv (classic ZTP):
// the agent of a host a CAPI Metal3Machine provisioned is left to the
// bootstrap provider to approve, or to nobody.
func (s *Service) bindToBMH(ctx context.Context, a *agentv1beta1.Agent) (bool, error) {
	if a.Labels[agentv1beta1.BareMetalHostLabel] != "" || len(a.Status.Inventory.Interfaces) == 0 {
		return false, nil
	}
	bmhs := &bmov1alpha1.BareMetalHostList{}
	if err := s.client.List(ctx, bmhs, client.InNamespace(a.Namespace)); err != nil {
		return false, err
	}
	bmh := matchBMH(bmhs.Items, a)
	if bmh == nil {
		return false, nil
	}
	if a.Labels == nil {
		a.Labels = map[string]string{}
	}
	a.Labels[agentv1beta1.BareMetalHostLabel] = bmh.Name
	a.Spec.Approved = true
	if v := bmh.Annotations[bmhHostnameAnnotation]; v != "" && a.Spec.Hostname == "" {
		a.Spec.Hostname = v
	}
	if v := bmh.Annotations[bmhRoleAnnotation]; v != "" && a.Spec.Role == "" {
		a.Spec.Role = agentv1beta1.HostRole(v)
	}
	if v := bmh.Annotations[bmhDiskAnnotation]; v != "" && a.Spec.InstallationDiskID == "" {
		a.Spec.InstallationDiskID = v
	}
	if err := s.client.Update(ctx, a); err != nil {
		return false, fmt.Errorf("bind agent %s to BareMetalHost %s: %w", a.Name, bmh.Name, err)
	}
	s.events.add(a.Namespace, a.Name, "Agent %s bound to BareMetalHost %s", a.Name, bmh.Name)
	return true, nil
}

func matchBMH(bmhs []bmov1alpha1.BareMetalHost, a *agentv1beta1.Agent) *bmov1alpha1.BareMetalHost {
	for i := range bmhs {
		if bmhs[i].Labels[agentv1beta1.InfraEnvNameLabel] == "" {
			continue
		}
		mac := strings.ToLower(bmhs[i].Spec.BootMACAddress)
		for _, nic := range a.Status.Inventory.Interfaces {
			if mac != "" && strings.ToLower(nic.MacAddress) == mac {
				return &bmhs[i]
			}
		}
	}
	return nil
}
