package assisted

import (
	"context"

	bmov1alpha1 "github.com/metal3-io/baremetal-operator/apis/metal3.io/v1alpha1"
	conditionsv1 "github.com/openshift/custom-resource-status/conditions/v1"

	agentv1beta1 "github.com/paritylab/paritylab/providers/thirdparty/agentinstall/v1beta1"
)

// A host whose Agent loses its ClusterDeployment after its install began
// is unbound as upstream's UnbindHost does it (internal/host
// statemachine.go, the transitions to unbinding-pending-user-action;
// transition.go updateHostForUnbind): its install record is reset and it
// waits, unbinding-pending-user-action, until it boots its InfraEnv's
// discovery image again and re-registers, discovering-unbound. A host
// with a BareMetalHost is rebooted into it by the BMAC
// (rebootIntoDiscovery).
//
// Departure: a host unbound before its install began goes straight to
// the unbound state of its inventory, where upstream has it pass through
// unbinding and re-register first.
const unbindingStateInfo = "Host is waiting to be unbound from the cluster"

// hardwareDetailsAnnotation is where upstream's BMAC copies an Agent's
// inventory onto its BareMetalHost; the lab's does not, but a host that
// carries one loses it on unbind as upstream's does.
const hardwareDetailsAnnotation = "inspect.metal3.io/hardwaredetails"

// pendingUserActionOnUnbind are the states from which an unbound host
// waits for a reboot into discovery.
var pendingUserActionOnUnbind = map[string]bool{
	agentv1beta1.AgentStatePreparingForInstallation: true, agentv1beta1.AgentStatePreparingSuccessful: true,
	agentv1beta1.AgentStateInstalling: true, agentv1beta1.AgentStateInstallingInProgress: true,
	agentv1beta1.AgentStateInstallingPendingUserAction: true, agentv1beta1.AgentStateInstalled: true,
	agentv1beta1.AgentStateAddedToExistingCluster: true, agentv1beta1.AgentStateError: true,
	agentv1beta1.AgentStateCancelled: true,
}

// unbindInstalled resets the install record of an Agent unbound after its
// install began; it says whether it did. The Agent was bound if its Bound
// condition, written from its last spec, still says so: the lab keeps no
// host record beside the Agent, where upstream compares the spec with the
// host's cluster.
func unbindInstalled(a *agentv1beta1.Agent) bool {
	if isBound(a) || !pendingUserActionOnUnbind[a.Status.DebugInfo.State] || !conditionsv1.IsStatusConditionTrue(a.Status.Conditions, agentv1beta1.ConditionBound) {
		return false
	}
	st := &a.Status
	st.Progress = agentv1beta1.HostProgressInfo{}
	st.Kind = agentv1beta1.HostKindHost
	st.Role = agentv1beta1.HostRoleAutoAssign
	st.Bootstrap = false
	st.InstallationDiskID = ""
	st.DebugInfo.State = agentv1beta1.AgentStateUnbindingPendingUserAction
	st.DebugInfo.StateInfo = unbindingStateInfo
	return true
}

func isBound(a *agentv1beta1.Agent) bool {
	return a.Spec.ClusterDeploymentName != nil && a.Spec.ClusterDeploymentName.Name != ""
}

// unbindingConditions are an unbinding host's Installed and
// RequirementsMet (upstream's installed and requirementsMet for unbinding
// states).
func unbindingConditions(set func(conditionsv1.ConditionType, bool, string, string)) {
	const msg = "The agent is currently unbinding from a cluster deployment"
	set(agentv1beta1.ConditionInstalled, false, agentv1beta1.ReasonUnbinding, msg)
	set(agentv1beta1.ConditionRequirementsMet, false, agentv1beta1.ReasonUnbinding, msg)
}

// boundCondition is the Bound condition of a host in a state (upstream's
// bound): only binding and unbinding states differ from whether the
// Agent names a ClusterDeployment.
func boundCondition(state string, bound bool) (ok bool, reason, msg string) {
	switch {
	case state == agentv1beta1.AgentStateUnbindingPendingUserAction:
		return false, agentv1beta1.ReasonUnbindingPendingUserAction, "The agent is currently unbinding; Pending host reboot from infraenv image"
	case bound:
		return true, agentv1beta1.ReasonBound, "The agent is bound to a cluster deployment"
	}
	return false, agentv1beta1.ReasonUnbound, "The agent is not bound to any cluster deployment"
}

// unbindingPendingUserAction says the Agent waits for its host to boot
// the discovery image again.
func unbindingPendingUserAction(a *agentv1beta1.Agent) bool {
	c := conditionsv1.FindStatusCondition(a.Status.Conditions, agentv1beta1.ConditionBound)
	return c != nil && c.Reason == agentv1beta1.ReasonUnbindingPendingUserAction
}

// rebootIntoDiscovery has the BareMetalHost of an unbinding Agent boot
// its InfraEnv's image again (upstream's reconcileUnboundAgent); it says
// whether the BMAC's reconcile stops there. Non-converged: once, while the
// host is detached, it is attached and unpaused with its image removed,
// so the bare-metal operator deprovisions it and the BMAC sets the ISO
// again. Converged: a provisioned host loses its custom deploy to be
// deprovisioned, and is attached while it waits; once it is available,
// the BMAC provisions it with the discovery deploy again.
func (s *Service) rebootIntoDiscovery(bmh *bmov1alpha1.BareMetalHost) bool {
	_, detached := bmh.Annotations[detachedAnnotation]
	if !s.opts.ConvergedFlow {
		if !detached {
			return false
		}
		dropAnnotations(bmh, detachedAnnotation, bmov1alpha1.PausedAnnotation, hardwareDetailsAnnotation, spokeCreatedAnnotation)
		bmh.Spec.Image = nil
		s.events.add(bmh.Namespace, bmh.Name, "BareMetalHost %s reboots into the discovery image: its Agent was unbound", bmh.Name)
		return true
	}
	stop := false
	switch bmh.Status.Provisioning.State {
	case bmov1alpha1.StateProvisioned:
		if bmh.Spec.CustomDeploy != nil {
			bmh.Spec.CustomDeploy = nil
			s.events.add(bmh.Namespace, bmh.Name, "BareMetalHost %s is deprovisioned: its Agent was unbound", bmh.Name)
		}
		stop = true
	case bmov1alpha1.StateDeprovisioning:
		stop = true
	}
	if detached {
		dropAnnotations(bmh, detachedAnnotation, bmov1alpha1.PausedAnnotation)
	}
	dropAnnotations(bmh, hardwareDetailsAnnotation, spokeCreatedAnnotation)
	return stop
}

func dropAnnotations(bmh *bmov1alpha1.BareMetalHost, keys ...string) {
	for _, k := range keys {
		delete(bmh.Annotations, k)
	}
}

// reregister is a known host registering again. One that was unbinding
// booted the discovery image as asked: it is discovering-unbound, its old
// inventory dropped until it reports the new one (upstream's pool host
// state machine, RegisterHost from the unbinding states).
func (s *Service) reregister(ctx context.Context, a *agentv1beta1.Agent) error {
	st := a.Status.DebugInfo.State
	if st != agentv1beta1.AgentStateUnbindingPendingUserAction && st != agentv1beta1.AgentStateUnbinding {
		return nil
	}
	s.events.add(a.Namespace, a.Name, "Host %s: booted the discovery image again after it was unbound", hostname(a))
	return s.patchAgentStatus(ctx, a.Namespace, a.Name, func(st *agentv1beta1.AgentStatus) {
		st.Inventory = agentv1beta1.HostInventory{}
		st.DebugInfo.State = agentv1beta1.AgentStateDiscoveringUnbound
		st.DebugInfo.StateInfo = "Waiting for the host's inventory"
	})
}
