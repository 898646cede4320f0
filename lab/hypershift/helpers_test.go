package hypershift

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"path/filepath"
	"testing"
	"time"

	hypershiftv1beta1 "github.com/openshift/hypershift/api/hypershift/v1beta1"
	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/paritylab/paritylab/lab/capi"
	"github.com/paritylab/paritylab/lab/controllers"
	"github.com/paritylab/paritylab/lab/controlplane"
	"github.com/paritylab/paritylab/lab/crds"
	"github.com/paritylab/paritylab/lab/state"
)

// hub is a lab hub running the operator beside CAPI core (whose
// conversion webhooks serve the v1beta1 Cluster the operator writes) and
// the assisted-service and Hive CRDs the agent provider reads.
type hub struct {
	op     *Operator
	c      client.Client
	config *rest.Config
	ledger *state.Ledger
}

func startHub(t *testing.T) *hub {
	t.Helper()
	ctx := context.Background()
	dir := t.TempDir()
	// kube-controller-manager runs the garbage collector, which must
	// leave alone what the operator and the migration keep owned.
	cp, err := controlplane.Start(ctx, controlplane.Options{Name: "hypershift-test", Dir: filepath.Join(dir, "hub"), ControllerManager: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cp.Stop() })
	ledger, err := state.Create(filepath.Join(dir, "ledger.json"), "hypershift-test")
	if err != nil {
		t.Fatal(err)
	}
	op, err := New(Options{StateDir: filepath.Join(dir, "state"), Tracker: ledger})
	if err != nil {
		t.Fatal(err)
	}
	host, err := controllers.Start(ctx, controllers.Options{
		RESTConfig: cp.RESTConfig(), WebhookHost: "127.0.0.1", CertDir: t.TempDir(),
		Components: []controllers.Component{op, capi.New(capi.Options{}),
			&controllers.CRDsOnly{ComponentName: "assisted", Sets: []crds.Set{crds.Hive(), crds.Assisted()}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = host.Stop(context.Background())
		_ = op.Stop()
	})
	c, err := client.New(cp.RESTConfig(), client.Options{Scheme: host.Manager().GetScheme()})
	if err != nil {
		t.Fatal(err)
	}
	return &hub{op: op, c: c, config: cp.RESTConfig(), ledger: ledger}
}

func (h *hub) create(t *testing.T, objs ...client.Object) {
	t.Helper()
	for _, obj := range objs {
		if err := h.c.Create(context.Background(), obj); err != nil {
			t.Fatalf("create %T %s: %v", obj, obj.GetName(), err)
		}
	}
}

func (h *hub) get(t *testing.T, key client.ObjectKey, obj client.Object) {
	t.Helper()
	if err := h.c.Get(context.Background(), key, obj); err != nil {
		t.Fatalf("get %T %s: %v", obj, key, err)
	}
}

func (h *hub) eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	h.eventuallyWithin(t, 90*time.Second, what, cond)
}

func (h *hub) eventuallyWithin(t *testing.T, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	err := wait.PollUntilContextTimeout(context.Background(), 200*time.Millisecond, timeout, true, func(context.Context) (bool, error) {
		return cond(), nil
	})
	if err != nil {
		t.Fatalf("timed out waiting for %s", what)
	}
}

// agentHostedCluster is a HostedCluster on the agent platform in
// namespace clusters, its Agents in hardware, with its pull secret; the
// options change it before it is created.
func (h *hub) agentHostedCluster(t *testing.T, opts ...func(*hypershiftv1beta1.HostedCluster)) *hypershiftv1beta1.HostedCluster {
	t.Helper()
	for _, ns := range []string{"clusters", "hardware"} {
		h.create(t, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})
	}
	h.create(t, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "clusters", Name: "hc1-pull-secret"},
		Type: corev1.SecretTypeDockerConfigJson, Data: map[string][]byte{corev1.DockerConfigJsonKey: []byte(`{"auths":{}}`)}})
	hc := &hypershiftv1beta1.HostedCluster{
		ObjectMeta: metav1.ObjectMeta{Namespace: "clusters", Name: "hc1", Labels: map[string]string{"api.openshift.com/id": "abc", "team": "edge"}},
		Spec: hypershiftv1beta1.HostedClusterSpec{
			Release:    hypershiftv1beta1.Release{Image: "quay.io/openshift-release-dev/ocp-release:4.21.0-x86_64"},
			PullSecret: corev1.LocalObjectReference{Name: "hc1-pull-secret"},
			DNS:        hypershiftv1beta1.DNSSpec{BaseDomain: "lab.paritylab.io"},
			Etcd: hypershiftv1beta1.EtcdSpec{ManagementType: hypershiftv1beta1.Managed, Managed: &hypershiftv1beta1.ManagedEtcdSpec{
				Storage: hypershiftv1beta1.ManagedEtcdStorageSpec{Type: hypershiftv1beta1.PersistentVolumeEtcdStorage}}},
			Platform: hypershiftv1beta1.PlatformSpec{Type: hypershiftv1beta1.AgentPlatform,
				Agent: &hypershiftv1beta1.AgentPlatformSpec{AgentNamespace: "hardware"}},
			Services: []hypershiftv1beta1.ServicePublishingStrategyMapping{
				{Service: hypershiftv1beta1.APIServer, ServicePublishingStrategy: hypershiftv1beta1.ServicePublishingStrategy{
					Type: hypershiftv1beta1.NodePort, NodePort: &hypershiftv1beta1.NodePortPublishingStrategy{Address: "10.0.2.2"}}},
				route(hypershiftv1beta1.OAuthServer), route(hypershiftv1beta1.Konnectivity), route(hypershiftv1beta1.Ignition),
			},
		},
	}
	for _, o := range opts {
		o(hc)
	}
	h.create(t, hc)
	return hc
}

// nodeClientCSR is a kubelet's client certificate request for node.
func nodeClientCSR(t *testing.T, node string) *certificatesv1.CertificateSigningRequest {
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
	return &certificatesv1.CertificateSigningRequest{ObjectMeta: metav1.ObjectMeta{GenerateName: "node-csr-"},
		Spec: certificatesv1.CertificateSigningRequestSpec{
			Request:    pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: der}),
			SignerName: certificatesv1.KubeAPIServerClientKubeletSignerName,
			Usages:     []certificatesv1.KeyUsage{certificatesv1.UsageDigitalSignature, certificatesv1.UsageClientAuth},
		}}
}

func route(s hypershiftv1beta1.ServiceType) hypershiftv1beta1.ServicePublishingStrategyMapping {
	return hypershiftv1beta1.ServicePublishingStrategyMapping{Service: s,
		ServicePublishingStrategy: hypershiftv1beta1.ServicePublishingStrategy{Type: hypershiftv1beta1.Route}}
}
