package hypershift

import (
	"context"
	"strings"
	"testing"

	conditionsv1 "github.com/openshift/custom-resource-status/conditions/v1"
	hypershiftv1beta1 "github.com/openshift/hypershift/api/hypershift/v1beta1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	capiagentv1 "github.com/paritylab/paritylab/providers/agent/api/v1beta1"
	agentv1 "github.com/paritylab/paritylab/providers/thirdparty/agentinstall/v1beta1"
)

// A HostedCluster annotated for private types gets its CAPI objects in
// cluster.hypershift.openshift.io, and its own Cluster API, agent
// provider and approver through the API proxy: a NodePool's Machine is
// made and binds an eligible Agent of its selector, its AgentMachine owned
// by the private Machine, and the Machine's deletion unbinds it. The
// platform's CAPI, running on the same hub,
// sees none of it: the control-plane namespace holds no cluster.x-k8s.io
// object.
func TestHostedClusterOnPrivateTypes(t *testing.T) {
	t.Parallel()
	h := startHub(t)
	ctx := context.Background()
	hc := h.availableHostedCluster(t, func(hc *hypershiftv1beta1.HostedCluster) {
		hc.Annotations = map[string]string{PrivateCAPITypesAnnotation: "true"}
	})
	cpns := ControlPlaneNamespace(hc)
	decoy := h.eligibleAgent(t, "decoy", "other")
	chosen := h.eligibleAgent(t, "chosen", "np1")
	np := h.agentNodePool(t, "np1", 1)

	h.eventually(t, "the NodePool's Agent bound through the private types", func() bool {
		h.get(t, client.ObjectKeyFromObject(chosen), chosen)
		return chosen.Spec.ClusterDeploymentName != nil
	})
	machines := h.privateList(t, cpns, "Machine")
	if len(machines) != 1 {
		t.Fatalf("%d private Machines in %s, want 1", len(machines), cpns)
	}
	m := &clusterv1.Machine{ObjectMeta: metav1.ObjectMeta{Namespace: cpns, Name: machines[0].GetName(), UID: machines[0].GetUID()}}
	infra, _, _ := unstructured.NestedString(machines[0].Object, "spec", "infrastructureRef", "name")
	m.Spec.InfrastructureRef.Name = infra
	if err := agentMachineOwnedBy(ctx, h.c, m); err != nil {
		t.Error(err)
	}
	if chosen.Labels[capiagentv1.AgentMachineRefLabelKey] != infra {
		t.Errorf("Agent %s bound with agentMachineRef %q, want %s", chosen.Name, chosen.Labels[capiagentv1.AgentMachineRefLabelKey], infra)
	}
	h.get(t, client.ObjectKeyFromObject(decoy), decoy)
	if decoy.Spec.ClusterDeploymentName != nil {
		t.Errorf("the decoy outside the selector was bound")
	}
	for _, kind := range []string{"Cluster", "MachineDeployment", "MachineSet"} {
		if n := len(h.privateList(t, cpns, kind)); n != 1 {
			t.Errorf("%d private %ss in %s, want 1", n, kind, cpns)
		}
	}
	for _, kind := range []string{"Cluster", "MachineDeployment", "MachineSet", "Machine"} {
		l := &unstructured.UnstructuredList{}
		l.SetGroupVersionKind(schema.GroupVersionKind{Group: clusterv1.GroupVersion.Group, Version: "v1beta2", Kind: kind + "List"})
		if err := h.c.List(ctx, l, client.InNamespace(cpns)); err != nil || len(l.Items) != 0 {
			t.Errorf("the platform's cluster.x-k8s.io holds %d %ss in %s (%v)", len(l.Items), kind, cpns, err)
		}
	}
	h.eventually(t, "the NodePool's status from its Machine, read through the proxy", func() bool {
		h.get(t, client.ObjectKeyFromObject(np), np)
		for _, c := range np.Status.Conditions {
			if c.Type == hypershiftv1beta1.NodePoolAllMachinesReadyConditionType {
				return c.Reason == "MachineNotReady" && strings.Contains(c.Message, m.Name)
			}
		}
		return false
	})

	// Without assisted-service the unbound Agent never returns to
	// discovery, so the Machine waits at its pre-terminate hook.
	if err := h.c.Delete(ctx, np); err != nil {
		t.Fatal(err)
	}
	h.eventually(t, "the Agent unbound by the private Machine's deletion", func() bool {
		h.get(t, client.ObjectKeyFromObject(chosen), chosen)
		return chosen.Spec.ClusterDeploymentName == nil
	})
}

// privateList lists a kind of CAPI core in the private group, on the hub.
func (h *hub) privateList(t *testing.T, ns, kind string) []unstructured.Unstructured {
	t.Helper()
	l := &unstructured.UnstructuredList{}
	l.SetGroupVersionKind(schema.GroupVersionKind{Group: privateGroup, Version: "v1beta2", Kind: kind + "List"})
	if err := h.c.List(context.Background(), l, client.InNamespace(ns)); err != nil {
		t.Fatalf("list private %ss: %v", kind, err)
	}
	return l.Items
}

// eligibleAgent is an Agent of the hardware namespace, labelled pool, that
// the agent provider may bind: approved, validated, connected, unbound,
// with a host name in its inventory.
func (h *hub) eligibleAgent(t *testing.T, name, pool string) *agentv1.Agent {
	t.Helper()
	a := &agentv1.Agent{
		ObjectMeta: metav1.ObjectMeta{Namespace: "hardware", Name: name, Labels: map[string]string{"pool": pool}},
		Spec:       agentv1.AgentSpec{Role: agentv1.HostRoleAutoAssign, Approved: true},
	}
	h.create(t, a)
	now := metav1.Now()
	for _, c := range []conditionsv1.Condition{
		{Type: agentv1.ConditionValidated, Status: corev1.ConditionTrue, Reason: agentv1.ReasonValidationsPassing},
		{Type: agentv1.ConditionConnected, Status: corev1.ConditionTrue, Reason: agentv1.ReasonAgentConnected},
		{Type: agentv1.ConditionBound, Status: corev1.ConditionFalse, Reason: agentv1.ReasonUnbound},
	} {
		c.LastTransitionTime, c.LastHeartbeatTime = now, now
		a.Status.Conditions = append(a.Status.Conditions, c)
	}
	a.Status.Inventory = agentv1.HostInventory{Hostname: name + ".hosts.example.com"}
	if err := h.c.Status().Update(context.Background(), a); err != nil {
		t.Fatalf("Agent %s status: %v", name, err)
	}
	return a
}
