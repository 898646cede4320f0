package conformance_test

import (
	"context"
	"fmt"
	"os"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	conditionsv1 "github.com/openshift/custom-resource-status/conditions/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	capiagentv1 "github.com/paritylab/paritylab/providers/agent/api/v1beta1"
	agentv1 "github.com/paritylab/paritylab/providers/thirdparty/agentinstall/v1beta1"
	"github.com/paritylab/paritylab/suites/conformance"
)

// The agent infrastructure provider against the contract its CRDs declare
// (v1beta1). What is its alone: the Agent assisted-service discovered
// (Provision) and that Agent's install finishing (Finish).
//
// The AgentCluster is provisioned by its own controller from a
// ClusterDeployment labelled agentClusterRef=<AgentCluster>, the path a
// restored hub takes, rather than built from a HyperShift
// HostedControlPlane: the contract is about the AgentCluster's status and
// endpoint, and the path that reads the control plane is covered by the
// controller's own tests.
var _ = Describe("Agent infrastructure provider", Label("conformance", "infrastructure"), func() {
	ctx := context.Background()
	conformance.InfrastructureProviderSpec(ctx, func() conformance.InfrastructureProviderSpecInput {
		return conformance.InfrastructureProviderSpecInput{
			Client:     shared.client,
			ClusterGVK: capiagentv1.GroupVersion.WithKind("AgentCluster"),
			MachineGVK: capiagentv1.GroupVersion.WithKind("AgentMachine"),
			NewCluster: func(string, string) *unstructured.Unstructured {
				return &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{
					"controlPlaneEndpoint": map[string]any{"host": "api.c.example.com", "port": int64(6443)},
				}}}
			},
			NewMachine: func(string, string) *unstructured.Unstructured {
				return &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{}}}
			},
			// HyperShift's user data: one merge source, the bearer token.
			BootstrapData: []byte(`{"ignition":{"version":"3.2.0","config":{"merge":[{"source":"https://ignition.example.com/ignition",` +
				`"httpHeaders":[{"name":"Authorization","value":"Bearer tok"},{"name":"NodePool","value":"clusters/np"}]}]}}}`),
			BootstrapFormat: "ignition",
			Provision:       discoverAgent,
			Finish:          installAgent,
			// The provider, as upstream, pauses on the value "true" only,
			// where Cluster API pauses on the annotation's presence: with
			// the default empty value this spec fails.
			PausedValue:   "true",
			Components:    readFile("../../providers/agent/components.yaml"),
			Metadata:      readFile("../../providers/agent/metadata.yaml"),
			ProviderLabel: "infrastructure-agent",
		}
	})
})

func readFile(name string) []byte {
	raw, err := os.ReadFile(name)
	Expect(err).NotTo(HaveOccurred())
	return raw
}

// discoverAgent does what assisted-service and the AgentCluster's creator
// would: an Agent the provider may bind (approved; Validated and Connected
// True, Bound False; a host name and a NIC with a carrier and an IPv4
// address), and the ClusterDeployment labelled for the AgentCluster.
func discoverAgent(ctx context.Context, in conformance.ProvisionInput) error {
	c, ns := shared.client, in.Cluster.Namespace
	cd := newClusterDeployment(ns, in.InfraCluster.GetName(), map[string]string{capiagentv1.AgentClusterRefLabel: in.InfraCluster.GetName()})
	cd.Spec.Installed = true
	if err := c.Create(ctx, cd); err != nil {
		return fmt.Errorf("create ClusterDeployment: %w", err)
	}
	agent := &agentv1.Agent{
		ObjectMeta: metav1.ObjectMeta{Name: "host-0", Namespace: ns},
		Spec:       agentv1.AgentSpec{Role: agentv1.HostRoleAutoAssign, Approved: true},
	}
	if err := c.Create(ctx, agent); err != nil {
		return fmt.Errorf("create Agent: %w", err)
	}
	agent.Status.Inventory = agentv1.HostInventory{
		Hostname: "host-0.example.com",
		Interfaces: []agentv1.HostInterface{{
			Name: "eth0", HasCarrier: true, IPv4Addresses: []string{"192.0.2.10/24"}, IPv6Addresses: []string{}, Flags: []string{"up"},
		}},
	}
	setAgentConditions(agent, corev1.ConditionTrue, agentv1.ConditionValidated, agentv1.ConditionConnected)
	setAgentConditions(agent, corev1.ConditionFalse, agentv1.ConditionBound)
	if err := c.Status().Update(ctx, agent); err != nil {
		return fmt.Errorf("report the Agent's status: %w", err)
	}
	return nil
}

// installAgent waits for the provider to bind the Agent and then reports
// it bound, synced, meeting its requirements and installed, as
// assisted-service does once the host joined.
func installAgent(ctx context.Context, in conformance.ProvisionInput) error {
	agent := &agentv1.Agent{}
	key := client.ObjectKey{Namespace: in.Cluster.Namespace, Name: "host-0"}
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		if err := shared.client.Get(ctx, key, agent); err != nil {
			return false, err
		}
		if agent.Labels[capiagentv1.AgentMachineRefLabelKey] != in.InfraMachine.GetName() {
			return false, nil
		}
		setAgentConditions(agent, corev1.ConditionTrue,
			agentv1.ConditionBound, agentv1.ConditionSpecSynced, agentv1.ConditionRequirementsMet, agentv1.ConditionInstalled)
		return shared.client.Status().Update(ctx, agent) == nil, nil
	})
	if err != nil {
		return fmt.Errorf("wait for the provider to bind Agent %s: %w", key, err)
	}
	return nil
}

func setAgentConditions(agent *agentv1.Agent, status corev1.ConditionStatus, types ...conditionsv1.ConditionType) {
	for _, t := range types {
		conditionsv1.SetStatusCondition(&agent.Status.Conditions, conditionsv1.Condition{Type: t, Status: status, Reason: "Conformance"})
	}
}
