package assisted

import (
	"net/url"
	"strings"

	conditionsv1 "github.com/openshift/custom-resource-status/conditions/v1"
	corev1 "k8s.io/api/core/v1"

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

// setInstallConditions sets the ACI's conditions from the cluster's
// state as assisted-service does (clusterRequirementsMet,
// clusterValidated, clusterCompleted, clusterFailed, clusterStopped), with
// upstream's reasons and messages.
func (s *Service) setInstallConditions(in *install) {
	aci, state, info := in.aci, in.aci.Status.DebugInfo.State, in.aci.Status.DebugInfo.StateInfo
	setACIConditionStatus(aci, hiveextv1beta1.ConditionRequirementsMet, requirementsMet(state))
	setACIConditionStatus(aci, hiveextv1beta1.ConditionValidated, validated(state, failingValidations(in)))
	setACIConditionStatus(aci, hiveextv1beta1.ConditionCompleted, completed(state, info, in.aci.Spec.HoldInstallation))
	setACIConditionStatus(aci, hiveextv1beta1.ConditionFailed, failed(state, info))
	setACIConditionStatus(aci, hiveextv1beta1.ConditionStopped, stopped(state))
}

// installCondition is a condition's status, reason and message.
type installCondition struct {
	status          corev1.ConditionStatus
	reason, message string
}

func requirementsMet(state string) installCondition {
	switch state {
	case hiveextv1beta1.ClusterStateReady:
		return installCondition{corev1.ConditionTrue, hiveextv1beta1.ReasonClusterReady, "The cluster is ready to begin the installation"}
	case "", hiveextv1beta1.ClusterStateInsufficient, hiveextv1beta1.ClusterStatePendingForInput:
		return installCondition{corev1.ConditionFalse, hiveextv1beta1.ReasonClusterNotReady, "The cluster is not ready to begin the installation"}
	case hiveextv1beta1.ClusterStateInstalled, hiveextv1beta1.ClusterStateError:
		return installCondition{corev1.ConditionTrue, hiveextv1beta1.ReasonClusterInstallationStopped, "The cluster installation stopped"}
	}
	return installCondition{corev1.ConditionTrue, hiveextv1beta1.ReasonClusterAlreadyInstalling, "The cluster requirements are met"}
}

// failingValidations are the messages of the cluster's failing
// validations: its own and, as upstream's all-hosts-are-ready-to-install
// does, its hosts'.
func failingValidations(in *install) []string {
	failing := failingMessages(in.aci.Status.ValidationsInfo["network"])
	for i := range in.agents {
		a := &in.agents[i]
		if !conditionTrue(a, agentv1beta1.ConditionValidated) && !installStates[a.Status.DebugInfo.State] {
			failing = append(failing, hostname(a)+": "+conditionMessage(a, agentv1beta1.ConditionValidated))
		}
	}
	return failing
}

func validated(state string, failing []string) installCondition {
	switch state {
	case "", hiveextv1beta1.ClusterStateInsufficient:
		return installCondition{corev1.ConditionFalse, hiveextv1beta1.ReasonValidationsFailing, "The cluster's validations are failing: " + strings.Join(failing, ",")}
	case hiveextv1beta1.ClusterStatePendingForInput:
		return installCondition{corev1.ConditionFalse, hiveextv1beta1.ReasonValidationsUserPending, "The cluster's validations are pending for user: " + strings.Join(failing, ",")}
	}
	return installCondition{corev1.ConditionTrue, hiveextv1beta1.ReasonValidationsPassing, "The cluster's validations are passing"}
}

func completed(state, info string, held bool) installCondition {
	switch state {
	case hiveextv1beta1.ClusterStateInstalled, hiveextv1beta1.ClusterStateAddingHosts:
		return installCondition{corev1.ConditionTrue, hiveextv1beta1.ReasonInstallationCompleted, "The installation has completed: " + info}
	case hiveextv1beta1.ClusterStateError:
		return installCondition{corev1.ConditionFalse, hiveextv1beta1.ReasonInstallationFailed, "The installation has failed: " + info}
	case hiveextv1beta1.ClusterStateReady:
		if held {
			return installCondition{corev1.ConditionFalse, hiveextv1beta1.ReasonInstallationOnHold, "The installation is on hold. To unhold set holdInstallation to false"}
		}
		return installCondition{corev1.ConditionFalse, hiveextv1beta1.ReasonInstallationNotStarted, "The installation has not yet started"}
	case "", hiveextv1beta1.ClusterStateInsufficient, hiveextv1beta1.ClusterStatePendingForInput:
		return installCondition{corev1.ConditionFalse, hiveextv1beta1.ReasonInstallationNotStarted, "The installation has not yet started"}
	}
	return installCondition{corev1.ConditionFalse, hiveextv1beta1.ReasonInstallationInProgress, "The installation is in progress: " + info}
}

func failed(state, info string) installCondition {
	if state == hiveextv1beta1.ClusterStateError {
		return installCondition{corev1.ConditionTrue, hiveextv1beta1.ReasonInstallationFailed, "The installation failed: " + info}
	}
	return installCondition{corev1.ConditionFalse, hiveextv1beta1.ReasonInstallationNotFailed, "The installation has not failed"}
}

func stopped(state string) installCondition {
	switch state {
	case hiveextv1beta1.ClusterStateError:
		return installCondition{corev1.ConditionTrue, hiveextv1beta1.ReasonInstallationFailed, "The installation has stopped due to error"}
	case hiveextv1beta1.ClusterStateInstalled, hiveextv1beta1.ClusterStateAddingHosts:
		return installCondition{corev1.ConditionTrue, hiveextv1beta1.ReasonInstallationCompleted, "The installation has stopped because it completed successfully"}
	}
	return installCondition{corev1.ConditionFalse, hiveextv1beta1.ReasonInstallationNotStopped, "The installation is waiting to start or in progress"}
}

func conditionMessage(a *agentv1beta1.Agent, t conditionsv1.ConditionType) string {
	for _, c := range a.Status.Conditions {
		if c.Type == t {
			return c.Message
		}
	}
	return "unknown"
}
