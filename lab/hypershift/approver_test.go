package hypershift

import (
	"context"
	"testing"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// The hosted cluster's machine approver approves the node bootstrapper's
// client CSR for a node a Machine of the control plane names as its
// InternalDNS address, and kube-controller-manager signs it; a CSR for a
// node no Machine names, or from another requester, stays pending.
func TestApproverApprovesTheNodeOfAMachine(t *testing.T) {
	t.Parallel()
	h := startHub(t)
	ctx := context.Background()
	hc := h.availableHostedCluster(t)
	key := types.NamespacedName{Namespace: hc.Namespace, Name: hc.Name}
	h.machineNaming(t, hc.Spec.InfraID, ControlPlaneNamespace(hc), "worker-1")

	bootstrapper, _ := h.bootstrapperClient(t, key)
	admin, err := client.New(h.op.HostedAPI(key).RESTConfig(), client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	approved, unknown, foreign := nodeClientCSR(t, "worker-1"), nodeClientCSR(t, "worker-2"), nodeClientCSR(t, "worker-1")
	for _, c := range []struct {
		cl  client.Client
		csr *certificatesv1.CertificateSigningRequest
	}{{bootstrapper, approved}, {bootstrapper, unknown}, {admin, foreign}} {
		if err := c.cl.Create(ctx, c.csr); err != nil {
			t.Fatal(err)
		}
	}
	h.eventually(t, "worker-1's CSR approved and signed", func() bool {
		if err := admin.Get(ctx, client.ObjectKeyFromObject(approved), approved); err != nil {
			return false
		}
		return len(approved.Status.Certificate) > 0
	})
	if c := approved.Status.Conditions[0]; c.Type != certificatesv1.CertificateApproved || c.Reason != approveReason || c.Message != approveMessage {
		t.Errorf("approval %+v", c)
	}
	// The approver looks at a pending CSR again every few seconds.
	time.Sleep(2 * approverRecheck)
	for _, csr := range []*certificatesv1.CertificateSigningRequest{unknown, foreign} {
		if err := admin.Get(ctx, client.ObjectKeyFromObject(csr), csr); err != nil {
			t.Fatal(err)
		}
		if len(csr.Status.Conditions) != 0 {
			t.Errorf("CSR %s by %s was decided: %+v", csr.Name, csr.Spec.Username, csr.Status.Conditions)
		}
	}
}

// machineNaming makes a Machine in namespace whose InternalDNS address is
// node, paused so that CAPI leaves its status to the test.
func (h *hub) machineNaming(t *testing.T, clusterName, namespace, node string) {
	t.Helper()
	m := &clusterv1.Machine{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: node + "-machine",
			Annotations: map[string]string{clusterv1.PausedAnnotation: "true"}},
		Spec: clusterv1.MachineSpec{
			ClusterName: clusterName,
			Bootstrap:   clusterv1.Bootstrap{DataSecretName: ptr.To("user-data")},
			InfrastructureRef: clusterv1.ContractVersionedObjectReference{
				APIGroup: "capi-provider.agent-install.openshift.io", Kind: "AgentMachine", Name: node + "-agentmachine"},
		},
	}
	h.create(t, m)
	// CAPI may still write the Machine (its finalizer, the paused condition).
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		h.get(t, client.ObjectKeyFromObject(m), m)
		m.Status.Addresses = []clusterv1.MachineAddress{{Type: clusterv1.MachineInternalDNS, Address: node + "."}}
		return h.c.Status().Update(context.Background(), m)
	})
	if err != nil {
		t.Fatal(err)
	}
}
