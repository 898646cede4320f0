package v1beta1

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/cluster-api/util/conditions"
)

var _ conditions.Setter = (*AgentMachine)(nil)

// The Ready summary the upstream controller computes with Cluster API's
// condition helpers works on AgentMachine through GetConditions and
// SetConditions.
func TestAgentMachineReadySummary(t *testing.T) {
	types := []string{AgentReservedCondition, AgentSpecSyncedCondition, AgentValidatedCondition,
		AgentRequirementsMetCondition, InstalledCondition}
	summarise := func(am *AgentMachine) metav1.ConditionStatus {
		t.Helper()
		if err := conditions.SetSummaryCondition(am, am, clusterv1.ReadyCondition, conditions.ForConditionTypes(types)); err != nil {
			t.Fatal(err)
		}
		ready := conditions.Get(am, clusterv1.ReadyCondition)
		if ready == nil {
			t.Fatal("no Ready condition")
		}
		return ready.Status
	}

	am := &AgentMachine{}
	for _, ct := range types {
		conditions.Set(am, metav1.Condition{Type: ct, Status: metav1.ConditionTrue, Reason: AgentConditionTrueReason})
	}
	if got := summarise(am); got != metav1.ConditionTrue {
		t.Errorf("all five True: Ready is %s", got)
	}
	conditions.Set(am, metav1.Condition{Type: InstalledCondition, Status: metav1.ConditionFalse,
		Reason: "InstallationInProgress", Message: "Installing: writing image to disk"})
	if got := summarise(am); got != metav1.ConditionFalse {
		t.Errorf("Installed False: Ready is %s", got)
	}
	if len(am.Status.Conditions) != len(types)+1 {
		t.Errorf("status.conditions has %d entries, want %d", len(am.Status.Conditions), len(types)+1)
	}
}

// The finalizer and hook strings are compared across processes (the real provider,
// ours, scenarios); upstream's AgentCluster one has no dot before the group.
func TestFinalizerNames(t *testing.T) {
	for _, f := range []struct{ got, want string }{
		{AgentMachineFinalizerName, "agentmachine.agent-install.openshift.io/deprovision"},
		{AgentClusterFinalizerName, "agentclustercapi-provider.agent-install.openshift.io/deprovision"},
		{MachineDeleteHookAnnotation, "pre-terminate.delete.hook.machine.cluster.x-k8s.io/agentmachine"},
	} {
		if f.got != f.want {
			t.Errorf("finalizer %q, want %q", f.got, f.want)
		}
	}
}
