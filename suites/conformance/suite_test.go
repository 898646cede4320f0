package conformance_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	hivev1 "github.com/openshift/hive/apis/hive/v1"
	"k8s.io/apimachinery/pkg/runtime"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	"github.com/paritylab/paritylab/lab/agentproviders"
	"github.com/paritylab/paritylab/lab/controllers"
	"github.com/paritylab/paritylab/lab/crds"
	"github.com/paritylab/paritylab/lab/hub"
	"github.com/paritylab/paritylab/lab/hub/local"
	"github.com/paritylab/paritylab/providers/agent"
	"github.com/paritylab/paritylab/providers/controlplane"
	"github.com/paritylab/paritylab/providers/controlplane/release/releasetest"
	agentv1 "github.com/paritylab/paritylab/providers/thirdparty/agentinstall/v1beta1"
	hiveextv1 "github.com/paritylab/paritylab/providers/thirdparty/hiveextensions/v1beta1"
)

func TestConformance(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "Provider conformance suite")
}

// shared is the management cluster every spec uses: a local lab hub (real
// kube-apiserver, etcd, and the garbage collector) with the providers
// running in process as the lab runs them.
var shared struct {
	hub        hub.Hub
	host       *controllers.Host
	client     client.Client
	kubeconfig []byte
	// ignition plays assisted-service's discovery ignition endpoint.
	ignition *httptest.Server
	// registry serves the release the control plane installs.
	registry *releasetest.Registry
}

// The release the control-plane spec installs.
const (
	distributionVersion = "4.17.3"
	kubernetesVersion   = "1.30.5"
	releaseRepository   = "ocp/release"
)

var _ = BeforeSuite(func(ctx SpecContext) {
	ctrl.SetLogger(GinkgoLogr)
	dir, err := os.MkdirTemp("", "conformance-")
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(os.RemoveAll, dir)

	shared.ignition = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, `{"ignition":{"version":"3.1.0"},"storage":{"files":[{"path":"/etc/infraenv","contents":{"source":"data:,%s"}}]}}`,
			strings.TrimPrefix(r.URL.Path, "/"))
	}))
	DeferCleanup(shared.ignition.Close)
	shared.registry = releasetest.Start()
	DeferCleanup(shared.registry.Close)
	_, err = shared.registry.Push(releaseRepository, distributionVersion, kubernetesVersion)
	Expect(err).NotTo(HaveOccurred())

	By("starting a local hub")
	shared.hub = local.New(local.Options{Dir: filepath.Join(dir, "hub")})
	Expect(shared.hub.Create(ctx)).To(Succeed())
	DeferCleanup(func(ctx SpecContext) { Expect(shared.hub.Dispose(ctx)).To(Succeed()) })
	shared.kubeconfig, err = shared.hub.Kubeconfig()
	Expect(err).NotTo(HaveOccurred())

	By("running the providers on it")
	components := append([]controllers.Component{apis(), newBrokenBootstrap(), newBrokenInfrastructure(), agentproviders.NewAgent(agent.Options{})},
		agentproviders.New(agentproviders.Options{ControlPlane: controlplane.Options{RetryAfter: time.Second}})...)
	shared.host, err = controllers.Start(ctx, controllers.Options{
		RESTConfig:  shared.hub.RESTConfig(),
		WebhookHost: shared.hub.WebhookHost(),
		CertDir:     filepath.Join(dir, "webhook-certs"),
		Components:  components,
		Logger:      GinkgoLogr,
	})
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(func(ctx SpecContext) { Expect(shared.host.Stop(ctx)).To(Succeed()) })
	shared.client = shared.host.Client()
}, NodeTimeout(4*time.Minute))

// apis are the CRDs the providers need from others: Cluster API's core,
// hive's and assisted-service's, and a schemaless infrastructure provider.
func apis() controllers.Component {
	return &controllers.CRDsOnly{
		ComponentName: "conformance-apis",
		Sets: []crds.Set{
			crds.ClusterAPI(), crds.Hive(), crds.Assisted(),
			{Name: "conformance infrastructure", FS: os.DirFS("testdata"), Files: []string{"infrastructure.yaml"}},
		},
		Schemes: []func(*runtime.Scheme) error{
			clusterv1.AddToScheme, hivev1.AddToScheme, agentv1.AddToScheme, hiveextv1.AddToScheme,
		},
	}
}
