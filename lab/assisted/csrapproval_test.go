package assisted

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"testing"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/paritylab/paritylab/lab/assisted/agentapi"
	agentv1beta1 "github.com/paritylab/paritylab/providers/thirdparty/agentinstall/v1beta1"
)

// requestNodeCert creates a kubelet client CSR for system:node:<node> as
// the given client (its identity becomes the CSR's requester).
func requestNodeCert(t *testing.T, c client.Client, node string) *certificatesv1.CertificateSigningRequest {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{Subject: pkix.Name{CommonName: "system:node:" + node, Organization: []string{"system:nodes"}}}, key)
	if err != nil {
		t.Fatal(err)
	}
	csr := &certificatesv1.CertificateSigningRequest{
		ObjectMeta: metav1.ObjectMeta{GenerateName: "csr-"},
		Spec: certificatesv1.CertificateSigningRequestSpec{
			Request:    pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: der}),
			SignerName: agentapi.KubeletClientSigner,
			Usages:     []certificatesv1.KeyUsage{certificatesv1.UsageDigitalSignature, certificatesv1.UsageClientAuth},
		},
	}
	if err := c.Create(context.Background(), csr); err != nil {
		t.Fatal(err)
	}
	return csr
}

// bootstrapperClient acts as OpenShift's node-bootstrapper service
// account, allowed to request node certificates.
func (h *hub) bootstrapperClient(t *testing.T) client.Client {
	t.Helper()
	ctx := context.Background()
	crb := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "test-node-bootstrapper"},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "system:node-bootstrapper"},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: nodeBootstrapperUser}}}
	if err := h.c.Create(ctx, crb); err != nil {
		t.Fatal(err)
	}
	raw, err := h.cp.ClientKubeconfig("", nodeBootstrapperUser, "system:serviceaccounts", "system:serviceaccounts:openshift-machine-config-operator")
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := clientcmd.RESTConfigFromKubeConfig(raw)
	if err != nil {
		t.Fatal(err)
	}
	c, err := client.New(cfg, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// While a day-2 host of an imported cluster on platform None reboots into
// the cluster, the service approves its client CSR from the node
// bootstrapper, and no other: not before the host rebooted, not one from
// another requester, not another host's.
func TestDay2ClientCSRApproved(t *testing.T) {
	t.Parallel()
	h := startHub(t)
	ns := h.namespace(t)
	ctx := context.Background()
	h.importedCluster(t, ns)
	// The hub stands for the hosted cluster: its kubeconfig is the one the
	// ClusterDeployment's default Secret name holds.
	kc := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "hc1-admin-kubeconfig", Namespace: ns}, Data: map[string][]byte{"kubeconfig": h.cp.Kubeconfig()}}
	if err := h.c.Create(ctx, kc); err != nil {
		t.Fatal(err)
	}
	a := installingAgent(ns, "", "hs-0")
	a.Spec.ClusterDeploymentName.Name = "hc1"
	h.agent(t, a)

	boot := h.bootstrapperClient(t)
	mine := requestNodeCert(t, boot, "hs-0")
	theirs := requestNodeCert(t, boot, "hs-1")
	byAdmin := requestNodeCert(t, h.c, "hs-0")

	time.Sleep(2 * time.Second)
	if got := h.csr(t, mine.Name); csrApproved(got) {
		t.Fatal("the CSR was approved while the host was still writing its disk")
	}
	h.setAgentStage(t, ns, a.Name, agentv1beta1.HostStageRebooting)
	h.eventually(t, "the host's CSR approved", func() bool { return csrApproved(h.csr(t, mine.Name)) })
	got := h.csr(t, mine.Name)
	if c := got.Status.Conditions[0]; c.Reason != "NodeCSRApprove" || c.Message != "This CSR was approved by the assisted-service" {
		t.Errorf("approval %+v", c)
	}
	for _, other := range []*certificatesv1.CertificateSigningRequest{theirs, byAdmin} {
		if csrApproved(h.csr(t, other.Name)) {
			t.Errorf("CSR %s (requester %s) approved too", other.Name, h.csr(t, other.Name).Spec.Username)
		}
	}
	agent := &agentv1beta1.Agent{}
	h.eventually(t, "the approval recorded on the Agent", func() bool {
		_ = h.c.Get(ctx, client.ObjectKey{Namespace: ns, Name: a.Name}, agent)
		return len(agent.Status.CSRStatus.ApprovedCSRs) == 1
	})
	if rec := agent.Status.CSRStatus.ApprovedCSRs[0]; rec.Name != mine.Name || rec.Type != agentv1beta1.CSRTypeClient {
		t.Errorf("recorded %+v, want %s as a client CSR", rec, mine.Name)
	}
}

func (h *hub) csr(t *testing.T, name string) *certificatesv1.CertificateSigningRequest {
	t.Helper()
	csr := &certificatesv1.CertificateSigningRequest{}
	if err := h.c.Get(context.Background(), client.ObjectKey{Name: name}, csr); err != nil {
		t.Fatal(err)
	}
	return csr
}
