package agentmachine_test

import (
	"context"
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	capiagentv1 "github.com/paritylab/paritylab/providers/agent/api/v1beta1"
	"github.com/paritylab/paritylab/providers/agent/internal/controllers/agentmachine"
	agentv1 "github.com/paritylab/paritylab/providers/thirdparty/agentinstall/v1beta1"
)

// Rule 2: the owner Machine counts only through an owner reference of
// apiVersion cluster.x-k8s.io/v1beta2 or /v1beta1; without one the status
// says no Agent is reserved, and nothing is bound. Rule 1: the finalizer
// is added once the Machine is known.
func TestOwnerMachine(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name       string
		apiVersion string
		owned      bool
	}{
		{name: "v1beta2 owner", apiVersion: "cluster.x-k8s.io/v1beta2", owned: true},
		{name: "v1beta1 owner", apiVersion: "cluster.x-k8s.io/v1beta1", owned: true},
		{name: "v1alpha4 owner is not recognised", apiVersion: "cluster.x-k8s.io/v1alpha4"},
		{name: "no owner yet", apiVersion: "-"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			f.startController()
			agent := f.createAgent(f.eligibleAgent("a"))
			f.machine("m", machineSpec{ownerAPIVersion: tc.apiVersion})
			if tc.owned {
				f.g.Expect(f.eventuallyReserved("m").Name).To(Equal(agent.Name))
				f.g.Expect(f.agentMachine("m").Finalizers).To(ConsistOf(capiagentv1.AgentMachineFinalizerName))
				return
			}
			am := f.eventuallyCondition("m", capiagentv1.AgentReservedCondition, metav1.ConditionFalse, capiagentv1.NoSuitableAgentsReason)
			f.g.Expect(am.Finalizers).To(BeEmpty(), "no finalizer before the Machine is known")
			f.consistentlyUnbound(agent)
		})
	}
}

// Rule 3: a paused AgentMachine (cluster.x-k8s.io/paused: "true") is left
// alone, and so (our addition, the Cluster API contract) is one of a
// paused Cluster; unpausing resumes it.
func TestPaused(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name    string
		pause   func(f *fixture) machineSpec
		unpause func(f *fixture)
	}{
		{
			name: "paused AgentMachine",
			pause: func(*fixture) machineSpec {
				return machineSpec{dataSecret: "ud", annotations: map[string]string{clusterv1.PausedAnnotation: "true"}}
			},
			unpause: func(f *fixture) {
				am := &capiagentv1.AgentMachine{}
				f.g.Expect(env.Update(client.ObjectKey{Namespace: f.ns, Name: "m"}, am, func() {
					delete(am.Annotations, clusterv1.PausedAnnotation)
				}, false)).To(Succeed())
			},
		},
		{
			name: "paused Cluster",
			pause: func(f *fixture) machineSpec {
				f.setClusterPaused(true)
				return machineSpec{dataSecret: "ud"}
			},
			unpause: func(f *fixture) { f.setClusterPaused(false) },
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			f.startController()
			agent := f.createAgent(f.eligibleAgent("a"))
			f.bootstrapSecret("ud", hypershiftSource("tok"))
			f.machine("m", tc.pause(f))

			f.consistentlyUnbound(agent)
			am := f.agentMachine("m")
			f.g.Expect(am.Status.Conditions).To(BeEmpty())
			f.g.Expect(am.Status.AgentRef).To(BeNil())
			f.g.Expect(am.Spec.ProviderID).To(BeNil())
			f.g.Expect(am.Labels).NotTo(HaveKey(capiagentv1.BackupLabel))
			err := env.Client.Get(context.Background(), client.ObjectKey{Namespace: f.ns, Name: "agent-ud"}, &corev1.Secret{})
			f.g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "no token Secret while paused: %v", err)

			tc.unpause(f)
			f.g.Expect(f.eventuallyReserved("m").Name).To(Equal(agent.Name))
		})
	}
}

func (f *fixture) setClusterPaused(paused bool) {
	f.t.Helper()
	c := &clusterv1.Cluster{}
	f.g.Expect(env.Update(client.ObjectKey{Namespace: f.ns, Name: "c"}, c, func() { c.Spec.Paused = ptr.To(paused) }, false)).To(Succeed())
}

// Rule 14: with AgentNamespace set, Agents elsewhere are never seen; unset,
// every namespace's are.
func TestAgentNamespace(t *testing.T) {
	t.Parallel()
	t.Run("set: Agents of other namespaces are never bound", func(t *testing.T) {
		f := newFixture(t)
		f.startController()
		outside := f.eligibleAgent("outside")
		outside.Namespace = env.Namespace(t)
		outside = f.createAgent(outside)
		f.machine("m", machineSpec{})
		f.eventuallyCondition("m", capiagentv1.AgentReservedCondition, metav1.ConditionFalse, capiagentv1.NoSuitableAgentsReason)
		f.consistentlyUnbound(outside)

		inside := f.createAgent(f.eligibleAgent("inside"))
		f.g.Expect(f.eventuallyReserved("m").Name).To(Equal(inside.Name))
		f.consistentlyUnbound(outside)
	})
	t.Run("unset: Agents of any namespace", func(t *testing.T) {
		f := newFixture(t)
		f.startController(func(r *agentmachine.Reconciler) { r.AgentNamespace = "" })
		// Other tests' Agents are eligible too: the selector keeps to ours.
		elsewhere := f.eligibleAgent("elsewhere")
		elsewhere.Namespace = env.Namespace(t)
		elsewhere.Labels = map[string]string{"test": f.ns}
		elsewhere = f.createAgent(elsewhere)
		// The AgentMachine's name is unique too: an Agent labelled
		// agentMachineRef=<its name> in any namespace would be taken back
		// first (rule 5; the label holds no namespace).
		name := "m-" + f.ns
		f.machine(name, machineSpec{selector: &metav1.LabelSelector{MatchLabels: map[string]string{"test": f.ns}}})
		got := f.eventuallyReserved(name)
		f.g.Expect(got.Namespace).To(Equal(elsewhere.Namespace))
		f.g.Expect(got.Name).To(Equal(elsewhere.Name))
	})
}

// Rule 13: an Agent becoming eligible wakes an AgentMachine waiting for
// one; a Machine change wakes its AgentMachine (here: its bootstrap data
// appearing, which is then synced to the bound Agent).
func TestWatches(t *testing.T) {
	t.Parallel()
	t.Run("Agent becoming eligible", func(t *testing.T) {
		f := newFixture(t)
		f.startController()
		agent := f.createAgent(f.newAgent("a", false, eligibleConditions()...))
		f.machine("m", machineSpec{})
		f.eventuallyCondition("m", capiagentv1.AgentReservedCondition, metav1.ConditionFalse, capiagentv1.NoSuitableAgentsReason)
		f.changeAgent(agent, false, func(a *agentv1.Agent) { a.Spec.Approved = true })
		f.g.Expect(f.eventuallyReserved("m").Name).To(Equal(agent.Name))
	})
	t.Run("Machine getting its bootstrap data", func(t *testing.T) {
		f := newFixture(t)
		f.startController()
		f.createAgent(f.eligibleAgent("a"))
		f.machine("m", machineSpec{})
		agent := f.eventuallyReserved("m")
		f.g.Expect(agent.Spec.MachineConfigPool).To(BeEmpty())
		f.g.Expect(agent.Spec.IgnitionEndpointTokenReference).To(BeNil())

		f.bootstrapSecret("ud", hypershiftSource("tok"))
		m := &clusterv1.Machine{}
		f.g.Expect(env.Update(client.ObjectKey{Namespace: f.ns, Name: "m"}, m, func() {
			m.Spec.Bootstrap.DataSecretName = ptr.To("ud")
		}, false)).To(Succeed())
		f.g.Eventually(func(g Gomega) {
			f.get(agent)
			g.Expect(agent.Spec.MachineConfigPool).To(Equal("ignition"))
			g.Expect(agent.Spec.IgnitionEndpointTokenReference).To(Equal(&agentv1.IgnitionEndpointTokenReference{Namespace: f.ns, Name: "agent-ud"}))
		}, timeout).Should(Succeed())
	})
}
