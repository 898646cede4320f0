package agentmachine_test

import (
	"context"
	"testing"

	. "github.com/onsi/gomega"
	conditionsv1 "github.com/openshift/custom-resource-status/conditions/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/cluster-api/util/conditions"

	capiagentv1 "github.com/paritylab/paritylab/providers/agent/api/v1beta1"
	agentv1 "github.com/paritylab/paritylab/providers/thirdparty/agentinstall/v1beta1"
)

// mirroredTypes are the four AgentMachine conditions copied from the Agent.
var mirroredTypes = []string{
	capiagentv1.AgentSpecSyncedCondition, capiagentv1.AgentValidatedCondition,
	capiagentv1.AgentRequirementsMetCondition, capiagentv1.InstalledCondition,
}

// Rule 11, no Agent reserved: AgentReserved False with NoSuitableAgents
// when none is eligible, AgentNotYetFound and the reason when the search
// could not run; the four others False/AgentNotYetFound "Agent not yet
// reserved"; Ready False; status.ready false.
func TestStatusNotReserved(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name    string
		setup   func(f *fixture) machineSpec
		reason  string
		message string
	}{
		{
			name: "no eligible Agent",
			setup: func(f *fixture) machineSpec {
				f.createAgent(f.newAgent("unapproved", false, eligibleConditions()...))
				return machineSpec{}
			},
			reason: capiagentv1.NoSuitableAgentsReason,
		},
		{
			name: "AgentCluster without a ClusterDeployment",
			setup: func(f *fixture) machineSpec {
				f.createAgent(f.eligibleAgent("a"))
				f.agentCluster("no-cd", capiagentv1.ClusterDeploymentReference{})
				f.setClusterInfrastructure("no-cd")
				return machineSpec{}
			},
			reason:  capiagentv1.AgentNotYetFoundReason,
			message: "AgentCluster no-cd has no ClusterDeployment reference",
		},
		{
			name: "unusable agentLabelSelector",
			setup: func(f *fixture) machineSpec {
				f.createAgent(f.eligibleAgent("a"))
				return machineSpec{selector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
					{Key: "pool", Operator: "Near", Values: []string{"a"}},
				}}}
			},
			reason:  capiagentv1.AgentNotYetFoundReason,
			message: "parse agentLabelSelector",
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			f.startController()
			f.machine("m", tc.setup(f))
			am := f.eventuallyCondition("m", capiagentv1.AgentReservedCondition, metav1.ConditionFalse, tc.reason)
			f.g.Expect(conditions.GetMessage(am, capiagentv1.AgentReservedCondition)).To(ContainSubstring(tc.message))
			for _, c := range mirroredTypes {
				got := conditions.Get(am, c)
				f.g.Expect(got).NotTo(BeNil(), c)
				f.g.Expect(*got).To(conditionWith(metav1.ConditionFalse, capiagentv1.AgentNotYetFoundReason, "Agent not yet reserved"), c)
			}
			f.g.Expect(conditions.IsFalse(am, clusterv1.ReadyCondition)).To(BeTrue(), "Ready summarises")
			f.g.Expect(am.Status.Ready).To(BeFalse())
			f.g.Expect(am.Status.AgentRef).To(BeNil())
			f.g.Expect(am.Spec.ProviderID).To(BeNil())
		})
	}
}

// conditionWith matches a condition's status, reason and message.
func conditionWith(status metav1.ConditionStatus, reason, message string) OmegaMatcher {
	return And(
		WithTransform(func(c metav1.Condition) metav1.ConditionStatus { return c.Status }, Equal(status)),
		WithTransform(func(c metav1.Condition) string { return c.Reason }, Equal(reason)),
		WithTransform(func(c metav1.Condition) string { return c.Message }, Equal(message)),
	)
}

func (f *fixture) setClusterInfrastructure(agentCluster string) {
	f.t.Helper()
	c := &clusterv1.Cluster{}
	f.g.Expect(env.Update(client.ObjectKey{Namespace: f.ns, Name: "c"}, c, func() { c.Spec.InfrastructureRef.Name = agentCluster }, false)).To(Succeed())
}

// Rule 11, an Agent reserved: AgentReserved True/AgentReserved; each Agent
// condition mirrored (True → AgentConditionTrue, missing →
// ConditionNotFound, otherwise the Agent's reason and message); Ready the
// summary and status.ready its status. Once ready, the AgentMachine is
// left alone (rule 3).
func TestStatusReserved(t *testing.T) {
	f := newFixture(t)
	f.startController()
	agent := f.createAgent(f.eligibleAgent("a"))
	f.machine("m", machineSpec{})
	f.eventuallyReserved("m")

	// The eligible Agent has Validated True and no SpecSynced,
	// RequirementsMet or Installed.
	f.changeAgent(agent, true, func(a *agentv1.Agent) {
		conditionsv1.SetStatusCondition(&a.Status.Conditions, cond(agentv1.ConditionSpecSynced, corev1.ConditionFalse, agentv1.ReasonBackendError, "the service said no"))
		conditionsv1.SetStatusCondition(&a.Status.Conditions, cond(agentv1.ConditionInstalled, corev1.ConditionFalse, agentv1.ReasonInstallationInProgress, "Installation in progress: Writing image to disk"))
	})
	am := f.eventuallyCondition("m", capiagentv1.AgentSpecSyncedCondition, metav1.ConditionFalse, agentv1.ReasonBackendError)
	want := map[string]metav1.Condition{
		capiagentv1.AgentReservedCondition:        {Status: metav1.ConditionTrue, Reason: capiagentv1.AgentReservedReason},
		capiagentv1.AgentSpecSyncedCondition:      {Status: metav1.ConditionFalse, Reason: agentv1.ReasonBackendError, Message: "the service said no"},
		capiagentv1.AgentValidatedCondition:       {Status: metav1.ConditionTrue, Reason: capiagentv1.AgentConditionTrueReason},
		capiagentv1.AgentRequirementsMetCondition: {Status: metav1.ConditionFalse, Reason: capiagentv1.ConditionNotFoundReason},
		capiagentv1.InstalledCondition:            {Status: metav1.ConditionFalse, Reason: agentv1.ReasonInstallationInProgress, Message: "Installation in progress: Writing image to disk"},
	}
	f.eventuallyConditions("m", want)
	am = f.agentMachine("m")
	f.g.Expect(conditions.IsFalse(am, clusterv1.ReadyCondition)).To(BeTrue())
	f.g.Expect(conditions.GetMessage(am, clusterv1.ReadyCondition)).To(ContainSubstring("the service said no"))
	f.g.Expect(am.Status.Ready).To(BeFalse())

	// Everything True: Ready.
	f.changeAgent(agent, true, func(a *agentv1.Agent) {
		for _, t := range []conditionsv1.ConditionType{agentv1.ConditionSpecSynced, agentv1.ConditionRequirementsMet, agentv1.ConditionInstalled} {
			conditionsv1.SetStatusCondition(&a.Status.Conditions, cond(t, corev1.ConditionTrue, "Done", ""))
		}
	})
	f.eventuallyCondition("m", clusterv1.ReadyCondition, metav1.ConditionTrue, conditions.GetReason(f.readyWhenAllTrue(), clusterv1.ReadyCondition))
	// The patch helper writes conditions and the rest of the status apart.
	f.g.Eventually(func() bool { return f.agentMachine("m").Status.Ready }, timeout).Should(BeTrue())
	am = f.agentMachine("m")
	for _, c := range append(mirroredTypes, capiagentv1.AgentReservedCondition) {
		f.g.Expect(conditions.IsTrue(am, c)).To(BeTrue(), c)
	}

	// Ready is final: a later Agent change is not mirrored. (Once the
	// controller's cache has the ready AgentMachine: a reconcile reading a
	// stale one would mirror the change, upstream's as well.)
	f.g.Eventually(func(g Gomega) bool {
		cached := &capiagentv1.AgentMachine{}
		g.Expect(env.Manager.GetClient().Get(context.Background(), client.ObjectKeyFromObject(am), cached)).To(Succeed())
		return cached.Status.Ready
	}, timeout).Should(BeTrue())
	f.changeAgent(agent, true, func(a *agentv1.Agent) {
		conditionsv1.SetStatusCondition(&a.Status.Conditions, cond(agentv1.ConditionInstalled, corev1.ConditionFalse, agentv1.ReasonInstallationFailed, "broke"))
	})
	f.g.Consistently(func() bool { return f.agentMachine("m").Status.Ready }, quiet).Should(BeTrue())
	f.g.Expect(conditions.IsTrue(f.agentMachine("m"), capiagentv1.InstalledCondition)).To(BeTrue())
}

// readyWhenAllTrue is the Ready condition Cluster API's summary gives when
// the five conditions are True, to compare against without restating the
// library's reason.
func (f *fixture) readyWhenAllTrue() *capiagentv1.AgentMachine {
	am := &capiagentv1.AgentMachine{}
	for _, c := range append(mirroredTypes, capiagentv1.AgentReservedCondition) {
		conditions.Set(am, metav1.Condition{Type: c, Status: metav1.ConditionTrue, Reason: "R"})
	}
	f.g.Expect(conditions.SetSummaryCondition(am, am, clusterv1.ReadyCondition,
		conditions.ForConditionTypes(append(mirroredTypes, capiagentv1.AgentReservedCondition)))).To(Succeed())
	return am
}

// eventuallyConditions waits for the AgentMachine's conditions to have the
// status, reason and message of want.
func (f *fixture) eventuallyConditions(name string, want map[string]metav1.Condition) {
	f.t.Helper()
	f.g.Eventually(func(g Gomega) {
		am := f.agentMachine(name)
		for typ, w := range want {
			got := conditions.Get(am, typ)
			g.Expect(got).NotTo(BeNil(), typ)
			g.Expect(*got).To(conditionWith(w.Status, w.Reason, w.Message), typ)
		}
	}, timeout).Should(Succeed())
}

// Rule 11: a reserved Agent that lost its agentMachineRef label gets it
// back.
func TestStatusRelabelsAgent(t *testing.T) {
	f := newFixture(t)
	f.startController()
	f.createAgent(f.eligibleAgent("a"))
	f.machine("m", machineSpec{})
	agent := f.eventuallyReserved("m")
	f.changeAgent(agent, false, func(a *agentv1.Agent) { delete(a.Labels, capiagentv1.AgentMachineRefLabelKey) })
	f.g.Eventually(func() map[string]string { f.get(agent); return agent.Labels }, timeout).
		Should(HaveKeyWithValue(capiagentv1.AgentMachineRefLabelKey, "m"))
}

// Rule 8: provider ID agent://<Agent name>, agentRef, and the addresses:
// an ExternalIP per IPv4 address of an interface with a carrier, prefix
// length stripped, then InternalDNS the requested host name, else the
// inventory's.
func TestProviderIDAndAddresses(t *testing.T) {
	t.Parallel()
	inventory := agentv1.HostInventory{
		Interfaces: []agentv1.HostInterface{
			{Name: "eth0", HasCarrier: true, IPv4Addresses: []string{"192.168.122.10/24", "10.0.0.5/8"},
				IPv6Addresses: []string{"fd00::10/64"}, Flags: []string{"up"}},
			{Name: "eth1", HasCarrier: false, IPv4Addresses: []string{"172.16.0.9/16"}, IPv6Addresses: []string{}, Flags: []string{}},
			{Name: "eth2", HasCarrier: true, IPv4Addresses: []string{"198.51.100.7/32"}, IPv6Addresses: []string{}, Flags: []string{"up"}},
		},
	}
	cases := []struct {
		name              string
		hostname          string
		inventoryHostname string
		dns               string
	}{
		{name: "requested host name", hostname: "worker-0.example.com", inventoryHostname: "inventory-name", dns: "worker-0.example.com"},
		{name: "inventory host name", inventoryHostname: "inventory-name", dns: "inventory-name"},
		// Our departure: upstream writes an empty InternalDNS the CRD
		// rejects.
		{name: "no host name at all"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			f.startController()
			a := f.eligibleAgent("0c6a9e2d-host")
			a.Spec.Hostname = tc.hostname
			a.Status.Inventory = inventory
			a.Status.Inventory.Hostname = tc.inventoryHostname
			f.createAgent(a)
			f.machine("m", machineSpec{})
			f.eventuallyReserved("m")

			am := f.agentMachine("m")
			f.g.Expect(am.Spec.ProviderID).To(HaveValue(Equal("agent://0c6a9e2d-host")))
			f.g.Expect(am.Status.AgentRef).To(Equal(&capiagentv1.AgentReference{Namespace: f.ns, Name: "0c6a9e2d-host"}))
			want := []clusterv1.MachineAddress{
				{Type: clusterv1.MachineExternalIP, Address: "192.168.122.10"},
				{Type: clusterv1.MachineExternalIP, Address: "10.0.0.5"},
				{Type: clusterv1.MachineExternalIP, Address: "198.51.100.7"},
			}
			if tc.dns != "" {
				want = append(want, clusterv1.MachineAddress{Type: clusterv1.MachineInternalDNS, Address: tc.dns})
			}
			f.g.Expect(am.Status.Addresses).To(Equal(want))
		})
	}
}
