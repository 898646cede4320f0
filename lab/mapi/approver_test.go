package mapi

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	bmov1alpha1 "github.com/metal3-io/baremetal-operator/apis/metal3.io/v1alpha1"
	"testing"
	"time"

	"github.com/go-logr/logr"
	certificatesv1 "k8s.io/api/certificates/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/paritylab/paritylab/lab/assisted/agentapi"
	"github.com/paritylab/paritylab/lab/workload"
)

// A bootstrapping kubelet's CSR is approved only once a Machine without a
// Node names its host, and the cluster's signer then issues the
// certificate.
func TestApproverApprovesOnlyForAMachine(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	raw, err := suite.cluster.IssueBootstrapKubeconfig("")
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := clientcmd.RESTConfigFromKubeConfig(raw)
	if err != nil {
		t.Fatal(err)
	}
	bootstrapper := kubernetes.NewForConfigOrDie(cfg)
	admin := kubernetes.NewForConfigOrDie(suite.cluster.RESTConfig())
	rbac := bootstrapperRBAC()
	if err := suite.client.Create(ctx, rbac); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = suite.client.Delete(context.Background(), rbac) })

	csr := nodeCSR(t, "approve-host")
	created, err := bootstrapper.CertificatesV1().CertificateSigningRequests().Create(ctx, csr, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("bootstrapper creates its CSR: %v", err)
	}
	t.Cleanup(func() {
		_ = admin.CertificatesV1().CertificateSigningRequests().Delete(context.Background(), created.Name, metav1.DeleteOptions{})
	})
	r := &approver{client: suite.client, certs: admin, namespace: workload.MachineAPINamespace, recheck: time.Second, log: logr.Discard()}
	req := reconcile.Request{NamespacedName: types.NamespacedName{Name: created.Name}}
	if res, err := r.Reconcile(ctx, req); err != nil || res.RequeueAfter == 0 {
		t.Fatalf("without a Machine: want pending and a recheck, got %v %v", res, err)
	}
	if got, _ := admin.CertificatesV1().CertificateSigningRequests().Get(ctx, created.Name, metav1.GetOptions{}); workload.CSRDecided(got) {
		t.Fatal("CSR decided without a Machine")
	}

	h := newHost(t, "approve-host", nil, nil)
	m := newMachine(t, "approve-m", HostSelector{})
	a := testActuator()
	create(t, a, m)
	if _, err := r.Reconcile(ctx, req); err != nil {
		t.Fatal(err)
	}
	if got, _ := admin.CertificatesV1().CertificateSigningRequests().Get(ctx, created.Name, metav1.GetOptions{}); workload.CSRDecided(got) {
		t.Fatal("CSR decided for a Machine whose host is not provisioned (no addresses yet)")
	}
	setHostStatus(t, h, func(s *bmov1alpha1.BareMetalHostStatus) { s.Provisioning.State = bmov1alpha1.StateProvisioned })
	update(t, a, m)
	if _, err := r.Reconcile(ctx, req); err != nil {
		t.Fatal(err)
	}
	poll(ctx, t, "kube-controller-manager signs the approved CSR", func() bool {
		got, err := admin.CertificatesV1().CertificateSigningRequests().Get(ctx, created.Name, metav1.GetOptions{})
		return err == nil && len(got.Status.Certificate) > 0
	})
}

func TestNodeClientRequestRejectsOthers(t *testing.T) {
	csr := nodeCSR(t, "x")
	csr.Spec.Groups = []string{"system:authenticated"}
	if _, err := nodeClientRequest(csr); err == nil {
		t.Error("a requester outside system:bootstrappers must not be approved")
	}
	csr = nodeCSR(t, "x")
	csr.Spec.Groups = []string{workload.BootstrapGroup}
	csr.Spec.Usages = append(csr.Spec.Usages, certificatesv1.UsageServerAuth)
	if _, err := nodeClientRequest(csr); err == nil {
		t.Error("server auth usage must not be approved")
	}
}

func nodeCSR(t *testing.T, node string) *certificatesv1.CertificateSigningRequest {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{
		Subject: pkix.Name{CommonName: "system:node:" + node, Organization: []string{"system:nodes"}}}, key)
	if err != nil {
		t.Fatal(err)
	}
	return &certificatesv1.CertificateSigningRequest{
		ObjectMeta: metav1.ObjectMeta{GenerateName: "csr-"},
		Spec: certificatesv1.CertificateSigningRequestSpec{
			Request:    pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: der}),
			SignerName: agentapi.KubeletClientSigner,
			Usages:     []certificatesv1.KeyUsage{certificatesv1.UsageDigitalSignature, certificatesv1.UsageClientAuth},
		},
	}
}
