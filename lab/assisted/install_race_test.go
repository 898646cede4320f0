package assisted

import (
	"context"
	"testing"

	conditionsv1 "github.com/openshift/custom-resource-status/conditions/v1"
	hivev1 "github.com/openshift/hive/apis/hive/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	agentv1beta1 "github.com/paritylab/paritylab/providers/thirdparty/agentinstall/v1beta1"
	hiveextv1beta1 "github.com/paritylab/paritylab/providers/thirdparty/hiveextensions/v1beta1"
)

// A reconcile that works from a cache older than a host's install (the
// ACI still "preparing") must not start the install again: the host had
// already reported progress, and restarting sent it back from
// installing-in-progress to installing, a state change of the lab that no
// flow made (seen as a flapping agent phase in a parity run).
func TestStartInstallLeavesAnInstallingHostAlone(t *testing.T) {
	t.Parallel()
	h := startHub(t)
	ns := h.namespace(t)
	a := installedAgent(ns, "", "host-0", agentv1beta1.HostRoleMaster, agentv1beta1.HostKindHost)
	stale := *a.DeepCopy()
	stale.Status.DebugInfo.State = agentv1beta1.AgentStateKnown
	stale.Status.Progress.CurrentStage = ""
	a.Status.DebugInfo.State = agentv1beta1.AgentStateInstallingInProgress
	a.Status.Progress.CurrentStage = agentv1beta1.HostStageWritingImageToDisk
	h.agent(t, a)

	h.expectStartInstallLeaves(t, &stale, agentv1beta1.AgentStateInstallingInProgress)
}

// Nor may it start the install of a day-2 host unbound since (its
// AgentMachine deleted): the host went from unbinding-pending-user-action
// back to installing and never returned to discovery
// (TestUnboundDay2HostReturnsToDiscovery, in CI).
func TestStartInstallLeavesAnUnboundHostAlone(t *testing.T) {
	t.Parallel()
	h := startHub(t)
	ns := h.namespace(t)
	a := installedAgent(ns, "", "host-0", agentv1beta1.HostRoleWorker, agentv1beta1.HostKindHost)
	stale := *a.DeepCopy()
	stale.Status.DebugInfo.State = agentv1beta1.AgentStateKnown
	stale.Status.Progress.CurrentStage = ""
	a.Spec.ClusterDeploymentName = nil
	a.Status.DebugInfo.State = agentv1beta1.AgentStateUnbindingPendingUserAction
	a.Status.Progress.CurrentStage = ""
	h.agent(t, a)

	h.expectStartInstallLeaves(t, &stale, agentv1beta1.AgentStateUnbindingPendingUserAction)
}

// expectStartInstallLeaves has site-cd's install start the host as a
// stale cache shows it, and expects its stored state still to be state.
// No spoke: a start that went ahead would
// fail asking it for the node's credentials.
func (h *hub) expectStartInstallLeaves(t *testing.T, stale *agentv1beta1.Agent, state string) {
	t.Helper()
	ctx := context.Background()
	in := &install{cd: &hivev1.ClusterDeployment{ObjectMeta: metav1.ObjectMeta{Namespace: stale.Namespace, Name: "site-cd"}}}
	if err := h.svc.startInstall(ctx, in, stale, nil, false, false); err != nil {
		t.Fatalf("startInstall on a %s host: %v", state, err)
	}
	got := &agentv1beta1.Agent{}
	if err := h.c.Get(ctx, client.ObjectKeyFromObject(stale), got); err != nil {
		t.Fatal(err)
	}
	if got.Status.DebugInfo.State != state {
		t.Errorf("state %q, want it left at %q", got.Status.DebugInfo.State, state)
	}
}

// An auto-assign host whose readiness was validated against worker
// requirements (the Agent controller ran before the ACI assigned roles)
// must not count as a ready control-plane host once it is assigned
// master: the ACI reconcile that assigns the role keeps the cluster
// insufficient until the host is validated again. It once started a
// 4-core host as an SNO master (TestHardwareValidationBlocksInstall, 1 in
// 4 runs).
func TestRoleAssignmentWithdrawsReadinessEarnedForAnotherRole(t *testing.T) {
	t.Parallel()
	h := startHub(t)
	ctx := context.Background()
	ns := h.namespace(t)
	a := installedAgent(ns, "", "host-0", agentv1beta1.HostRoleAutoAssign, agentv1beta1.HostKindHost)
	a.Status.Progress.CurrentStage = ""
	a.Status.DebugInfo.State = agentv1beta1.AgentStateKnown
	h.agent(t, a)
	stale := *a.DeepCopy()
	stale.Status.Role = agentv1beta1.HostRoleAutoAssign
	conditionsv1.SetStatusConditionNoHeartbeat(&stale.Status.Conditions, conditionsv1.Condition{
		Type: agentv1beta1.ConditionRequirementsMet, Status: corev1.ConditionTrue, Reason: agentv1beta1.ReasonAgentReady})
	aci := &hiveextv1beta1.AgentClusterInstall{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "site"},
		Spec: hiveextv1beta1.AgentClusterInstallSpec{ProvisionRequirements: hiveextv1beta1.ProvisionRequirements{ControlPlaneAgents: 1}}}
	cd := &hivev1.ClusterDeployment{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "site-cd"}}
	in := &install{aci: aci, cd: cd, agents: []agentv1beta1.Agent{stale}}

	if _, err := h.svc.advancePreInstall(ctx, in); err != nil {
		t.Fatal(err)
	}
	if got := aci.Status.DebugInfo.State; got != hiveextv1beta1.ClusterStateInsufficient {
		t.Fatalf("cluster state %q after assigning master to a host validated as a worker, want %q", got, hiveextv1beta1.ClusterStateInsufficient)
	}
	stored := &agentv1beta1.Agent{}
	if err := h.c.Get(ctx, client.ObjectKeyFromObject(&a), stored); err != nil {
		t.Fatal(err)
	}
	if stored.Status.Role != agentv1beta1.HostRoleMaster {
		t.Errorf("stored role %q, want master", stored.Status.Role)
	}
}
