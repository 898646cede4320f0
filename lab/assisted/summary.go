package assisted

import (
	conditionsv1 "github.com/openshift/custom-resource-status/conditions/v1"
	"net/url"
	"strings"

	agentv1beta1 "github.com/paritylab/paritylab/providers/thirdparty/agentinstall/v1beta1"
	hiveextv1beta1 "github.com/paritylab/paritylab/providers/thirdparty/hiveextensions/v1beta1"
)

// summarize fills an install's counts, progress and conditions.
func (s *Service) summarize(in *install) {
	aci := in.aci
	st := &aci.Status
	st.ControlPlaneAgentsDiscovered, st.WorkerAgentsDiscovered = 0, 0
	for i := range in.agents {
		if effectiveRole(&in.agents[i]) == agentv1beta1.HostRoleMaster {
			st.ControlPlaneAgentsDiscovered++
		} else {
			st.WorkerAgentsDiscovered++
		}
	}
	st.ControlPlaneAgentsReady, st.WorkerAgentsReady = readyCounts(in.agents)
	st.DebugInfo.EventsURL = s.URL() + "/api/assisted-install/v2/events?namespace=" + url.QueryEscape(aci.Namespace)
	st.Progress.TotalPercentage = totalPercent(st.DebugInfo.State, in.agents)
	n := networkingOf(aci).withHosts(in.agents)
	n.record(st)
	st.ValidationsInfo = hiveextv1beta1.ValidationsStatus{"network": n.validations(in.agents)}
	s.setInstallConditions(in)
}

func totalPercent(state string, agents []agentv1beta1.Agent) int64 {
	switch state {
	case hiveextv1beta1.ClusterStateAddingHosts, hiveextv1beta1.ClusterStateInstalled:
		return 100
	case hiveextv1beta1.ClusterStateFinalizing:
		return 90
	case hiveextv1beta1.ClusterStateInstalling:
		var sum, n int64
		for i := range agents {
			if agents[i].Status.Kind != agentv1beta1.HostKindAddToExistingClusterHost {
				sum += agents[i].Status.Progress.InstallationPercentage
				n++
			}
		}
		if n == 0 {
			return 10
		}
		return 10 + sum*80/(100*n)
	}
	return 0
}

func (s *Service) setInstallConditions(in *install) {
	aci, state := in.aci, in.aci.Status.DebugInfo.State
	failing := failingMessages(aci.Status.ValidationsInfo["network"])
	for i := range in.agents {
		a := &in.agents[i]
		if !conditionTrue(a, agentv1beta1.ConditionValidated) && !installStates[a.Status.DebugInfo.State] {
			failing = append(failing, hostname(a)+": "+conditionMessage(a, agentv1beta1.ConditionValidated))
		}
	}
	if len(failing) == 0 {
		setACICondition(aci, hiveextv1beta1.ConditionValidated, true, "ValidationsPassing", "The cluster's validations are passing")
	} else {
		setACICondition(aci, hiveextv1beta1.ConditionValidated, false, "ValidationsFailing", "The cluster's validations are failing: "+strings.Join(failing, "; "))
	}
	preInstall := state == "" || state == hiveextv1beta1.ClusterStateInsufficient || state == hiveextv1beta1.ClusterStateReady
	switch {
	case preInstall && state == hiveextv1beta1.ClusterStateReady:
		setACICondition(aci, hiveextv1beta1.ConditionRequirementsMet, true, hiveextv1beta1.ReasonClusterReady, "The cluster is ready to begin the installation")
	case preInstall:
		setACICondition(aci, hiveextv1beta1.ConditionRequirementsMet, false, hiveextv1beta1.ReasonClusterNotReady, aci.Status.DebugInfo.StateInfo)
	default:
		setACICondition(aci, hiveextv1beta1.ConditionRequirementsMet, true, hiveextv1beta1.ReasonClusterAlreadyInstalling, "The cluster requirements are met")
	}
	done := state == hiveextv1beta1.ClusterStateAddingHosts || state == hiveextv1beta1.ClusterStateInstalled
	failed := state == hiveextv1beta1.ClusterStateError
	setACICondition(aci, hiveextv1beta1.ConditionCompleted, done, map[bool]string{true: "InstallationCompleted", false: "InstallationNotCompleted"}[done],
		map[bool]string{true: "The installation has completed: " + aci.Status.DebugInfo.StateInfo, false: "The installation has not completed: " + aci.Status.DebugInfo.StateInfo}[done])
	setACICondition(aci, hiveextv1beta1.ConditionFailed, failed, map[bool]string{true: "InstallationFailed", false: "InstallationNotFailed"}[failed],
		map[bool]string{true: "The installation failed: " + aci.Status.DebugInfo.StateInfo, false: "The installation has not failed"}[failed])
	setACICondition(aci, hiveextv1beta1.ConditionStopped, done || failed, map[bool]string{true: "InstallationStopped", false: "InstallationNotStopped"}[done || failed],
		map[bool]string{true: "The installation has stopped", false: "The installation is waiting to start or in progress"}[done || failed])
}

func conditionMessage(a *agentv1beta1.Agent, t conditionsv1.ConditionType) string {
	for _, c := range a.Status.Conditions {
		if c.Type == t {
			return c.Message
		}
	}
	return "unknown"
}
