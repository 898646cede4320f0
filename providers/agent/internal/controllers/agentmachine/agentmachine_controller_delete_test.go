package agentmachine_test

import (
	"context"
	"testing"

	. "github.com/onsi/gomega"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	capiagentv1 "github.com/paritylab/paritylab/providers/agent/api/v1beta1"
	agentv1 "github.com/paritylab/paritylab/providers/thirdparty/agentinstall/v1beta1"
)

// machineFinalizer stands for Cluster API's own finalizer on a Machine:
// no Machine controller runs in these tests, so the test plays its part
// in deletion (holding the Machine, reporting it waits on the hook).
const machineFinalizer = "test.paritylab.io/machine-controller"

// deleteMachine deletes the Machine "m" and its AgentMachine, as Cluster
// API does when a MachineSet scales down, the Machine held by
// machineFinalizer, and has the Machine report reason as its Deleting
// condition's.
func (f *fixture) deleteMachine(name, reason string) *clusterv1.Machine {
	f.t.Helper()
	ctx := context.Background()
	m := &clusterv1.Machine{ObjectMeta: metav1.ObjectMeta{Namespace: f.ns, Name: name}}
	f.g.Expect(env.Update(client.ObjectKeyFromObject(m), m, func() { m.Finalizers = append(m.Finalizers, machineFinalizer) }, false)).To(Succeed())
	f.g.Expect(env.Client.Delete(ctx, m)).To(Succeed())
	f.g.Expect(env.Client.Delete(ctx, &capiagentv1.AgentMachine{ObjectMeta: metav1.ObjectMeta{Namespace: f.ns, Name: name}})).To(Succeed())
	f.setDeleting(m, reason)
	return m
}

func (f *fixture) setDeleting(m *clusterv1.Machine, reason string) {
	f.t.Helper()
	f.g.Expect(env.Update(client.ObjectKeyFromObject(m), m, func() {
		m.Status.Conditions = []metav1.Condition{{Type: clusterv1.MachineDeletingCondition, Status: metav1.ConditionTrue,
			Reason: reason, Message: "test", LastTransitionTime: metav1.Now()}}
	}, true)).To(Succeed())
}

func (f *fixture) machineHook(m *clusterv1.Machine) func(Gomega) map[string]string {
	return func(g Gomega) map[string]string {
		got := &clusterv1.Machine{}
		g.Expect(env.Client.Get(context.Background(), client.ObjectKeyFromObject(m), got)).To(Succeed())
		return got.Annotations
	}
}

func (f *fixture) agentMachineGone(name string) func() bool {
	return func() bool {
		err := env.Client.Get(context.Background(), client.ObjectKey{Namespace: f.ns, Name: name}, &capiagentv1.AgentMachine{})
		return apierrors.IsNotFound(err)
	}
}

// expectUnbound: every field binding wrote on the Agent is cleared.
func expectUnbound(g Gomega, a *agentv1.Agent) {
	got := &agentv1.Agent{}
	g.Expect(env.Client.Get(context.Background(), client.ObjectKeyFromObject(a), got)).To(Succeed())
	g.Expect(got.Labels).NotTo(HaveKey(capiagentv1.AgentMachineRefLabelKey))
	g.Expect(got.Annotations).NotTo(HaveKey(capiagentv1.AgentMachineRefNamespace))
	g.Expect(got.Spec.ClusterDeploymentName).To(BeNil())
	g.Expect(got.Spec.MachineConfigPool).To(BeEmpty())
	g.Expect(got.Spec.IgnitionEndpointTokenReference).To(BeNil())
	g.Expect(got.Spec.IgnitionEndpointHTTPHeaders).To(BeEmpty())
}

// Rule 12: the Machine of a bound AgentMachine gets the pre-terminate hook
// while it lives.
func TestDeleteHookAdded(t *testing.T) {
	f := newFixture(t)
	f.boundWithUserData()
	m := &clusterv1.Machine{ObjectMeta: metav1.ObjectMeta{Namespace: f.ns, Name: "m"}}
	f.g.Eventually(f.machineHook(m), timeout).Should(HaveKeyWithValue(capiagentv1.MachineDeleteHookAnnotation, ""))
}

// Rule 12: once the Machine waits on the hook, the Agent is unbound at
// once; the hook and the AgentMachine's finalizer stay until the Agent is
// back in one of the states that let deletion go on, then both go.
func TestDeleteUnbindsThenReleases(t *testing.T) {
	t.Parallel()
	for _, state := range []string{
		agentv1.AgentStateDiscoveringUnbound, agentv1.AgentStateKnownUnbound, agentv1.AgentStateDisconnectedUnbound,
		agentv1.AgentStateInsufficientUnbound, agentv1.AgentStateDisabledUnbound,
		agentv1.AgentStateUnbindingPendingUserAction, agentv1.AgentStateError,
	} {
		t.Run(state, func(t *testing.T) {
			f := newFixture(t)
			agent := f.boundWithUserData()
			f.changeAgent(agent, true, func(a *agentv1.Agent) { a.Status.DebugInfo.State = agentv1.AgentStateAddedToExistingCluster })
			m := &clusterv1.Machine{ObjectMeta: metav1.ObjectMeta{Namespace: f.ns, Name: "m"}}
			f.g.Eventually(f.machineHook(m), timeout).Should(HaveKey(capiagentv1.MachineDeleteHookAnnotation))
			m = f.deleteMachine("m", clusterv1.MachineDeletingWaitingForPreTerminateHookReason)

			f.g.Eventually(func(g Gomega) { expectUnbound(g, agent) }, timeout).Should(Succeed())
			f.g.Consistently(f.machineHook(m), quiet).Should(HaveKey(capiagentv1.MachineDeleteHookAnnotation),
				"the hook must stay while the Agent is %s", agentv1.AgentStateAddedToExistingCluster)
			f.g.Expect(f.agentMachine("m").Finalizers).To(ContainElement(capiagentv1.AgentMachineFinalizerName))

			f.changeAgent(agent, true, func(a *agentv1.Agent) { a.Status.DebugInfo.State = state })
			f.g.Eventually(f.machineHook(m), timeout).ShouldNot(HaveKey(capiagentv1.MachineDeleteHookAnnotation))
			f.g.Eventually(f.agentMachineGone("m"), timeout).Should(BeTrue(), "the AgentMachine's finalizer removed")
		})
	}
}

// Rule 12: a Machine being deleted but not yet at the hook (still
// draining) keeps its Agent bound, and the AgentMachine its finalizer.
func TestDeleteWaitsForTheHook(t *testing.T) {
	f := newFixture(t)
	agent := f.boundWithUserData()
	m := &clusterv1.Machine{ObjectMeta: metav1.ObjectMeta{Namespace: f.ns, Name: "m"}}
	f.g.Eventually(f.machineHook(m), timeout).Should(HaveKey(capiagentv1.MachineDeleteHookAnnotation))
	m = f.deleteMachine("m", clusterv1.MachineDeletingDrainingNodeReason)
	f.g.Consistently(func(g Gomega) {
		got := &agentv1.Agent{}
		g.Expect(env.Client.Get(context.Background(), client.ObjectKeyFromObject(agent), got)).To(Succeed())
		g.Expect(got.Labels).To(HaveKeyWithValue(capiagentv1.AgentMachineRefLabelKey, "m"))
		g.Expect(got.Spec.ClusterDeploymentName).NotTo(BeNil())
		g.Expect(f.machineHook(m)(g)).To(HaveKey(capiagentv1.MachineDeleteHookAnnotation))
	}, quiet).Should(Succeed())
	f.g.Expect(f.agentMachine("m").Finalizers).To(ContainElement(capiagentv1.AgentMachineFinalizerName))
}

// Rule 12: a paused AgentMachine being deleted (a move to another hub)
// lets the Machine go without unbinding its Agent.
func TestDeletePausedKeepsTheAgentBound(t *testing.T) {
	f := newFixture(t)
	agent := f.boundWithUserData()
	m := &clusterv1.Machine{ObjectMeta: metav1.ObjectMeta{Namespace: f.ns, Name: "m"}}
	f.g.Eventually(f.machineHook(m), timeout).Should(HaveKey(capiagentv1.MachineDeleteHookAnnotation))
	am := f.agentMachine("m")
	f.g.Expect(env.Update(client.ObjectKeyFromObject(am), am, func() { am.Annotations = map[string]string{clusterv1.PausedAnnotation: "true"} }, false)).To(Succeed())
	m = f.deleteMachine("m", clusterv1.MachineDeletingWaitingForPreTerminateHookReason)
	f.g.Eventually(f.machineHook(m), timeout).ShouldNot(HaveKey(capiagentv1.MachineDeleteHookAnnotation))
	f.g.Eventually(f.agentMachineGone("m"), timeout).Should(BeTrue())
	got := &agentv1.Agent{ObjectMeta: metav1.ObjectMeta{Namespace: agent.Namespace, Name: agent.Name}}
	f.get(got)
	f.g.Expect(got.Labels).To(HaveKeyWithValue(capiagentv1.AgentMachineRefLabelKey, "m"), "a paused AgentMachine's Agent stays bound")
	f.g.Expect(got.Spec.ClusterDeploymentName).NotTo(BeNil())
}

// Rule 12: an Agent that is gone has nothing to wait for.
func TestDeleteAgentGone(t *testing.T) {
	f := newFixture(t)
	agent := f.boundWithUserData()
	m := &clusterv1.Machine{ObjectMeta: metav1.ObjectMeta{Namespace: f.ns, Name: "m"}}
	f.g.Eventually(f.machineHook(m), timeout).Should(HaveKey(capiagentv1.MachineDeleteHookAnnotation))
	f.g.Expect(env.Client.Delete(context.Background(), agent)).To(Succeed())
	m = f.deleteMachine("m", clusterv1.MachineDeletingWaitingForPreTerminateHookReason)
	f.g.Eventually(f.machineHook(m), timeout).ShouldNot(HaveKey(capiagentv1.MachineDeleteHookAnnotation))
	f.g.Eventually(f.agentMachineGone("m"), timeout).Should(BeTrue())
}

// Upstream L116-124: a deleting AgentMachine whose Machine is gone
// loses its finalizer.
func TestDeleteMachineGone(t *testing.T) {
	f := newFixture(t)
	f.boundWithUserData()
	f.g.Eventually(func() []string { return f.agentMachine("m").Finalizers }, timeout).Should(ContainElement(capiagentv1.AgentMachineFinalizerName))
	ctx := context.Background()
	m := &clusterv1.Machine{ObjectMeta: metav1.ObjectMeta{Namespace: f.ns, Name: "m"}}
	f.g.Expect(env.Client.Delete(ctx, m)).To(Succeed())
	f.g.Eventually(func() bool { return apierrors.IsNotFound(env.Client.Get(ctx, client.ObjectKeyFromObject(m), m)) }, timeout).Should(BeTrue())
	f.g.Expect(env.Client.Delete(ctx, &capiagentv1.AgentMachine{ObjectMeta: metav1.ObjectMeta{Namespace: f.ns, Name: "m"}})).To(Succeed())
	f.g.Eventually(f.agentMachineGone("m"), timeout).Should(BeTrue())
}
