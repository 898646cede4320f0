package workload

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	configv1 "github.com/openshift/api/config/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/paritylab/paritylab/lab/workload/cvo"
)

func TestClusterUp(t *testing.T) {
	updates := []configv1.Release{LabRelease("4.21.1"), LabRelease("4.21.2")}
	rec := newRecorder()
	c := startCluster(t, Options{Name: "up", AvailableUpdates: updates, Tracker: rec})
	ctx := context.Background()

	t.Run("guest SAN", func(t *testing.T) { checkGuestSAN(t, c) })
	t.Run("kubeconfigs", func(t *testing.T) { checkKubeconfigs(t, c) })
	t.Run("CRDs established", func(t *testing.T) { checkCRDs(t, c) })
	cl := newClient(t, c.RESTConfig())
	t.Run("machine API namespace", func(t *testing.T) {
		if err := cl.Get(ctx, client.ObjectKey{Name: MachineAPINamespace}, &corev1.Namespace{}); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("Infrastructure", func(t *testing.T) { checkInfrastructure(t, c, cl) })
	t.Run("ClusterVersion", func(t *testing.T) { checkClusterVersion(t, c, cl, updates) })
	t.Run("teardown", func(t *testing.T) { checkTeardown(t, c, rec) })
}

func checkGuestSAN(t *testing.T, c *Cluster) {
	u, err := url.Parse(c.Server())
	if err != nil {
		t.Fatal(err)
	}
	conn, err := tls.Dial("tcp", u.Host, &tls.Config{InsecureSkipVerify: true}) //nolint:gosec // the certificate is what is inspected
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	leaf := conn.ConnectionState().PeerCertificates[0]
	roots := x509.NewCertPool()
	cfg := c.RESTConfig()
	if !roots.AppendCertsFromPEM(cfg.CAData) {
		t.Fatal("admin REST config carries no CA")
	}
	for _, host := range []string{GuestGateway, "127.0.0.1"} {
		if _, err := leaf.Verify(x509.VerifyOptions{DNSName: host, Roots: roots}); err != nil {
			t.Errorf("serving certificate does not verify for %s: %v", host, err)
		}
	}
	if want := "https://" + GuestGateway + ":" + u.Port(); c.GuestServer() != want {
		t.Errorf("GuestServer() = %q, want %q", c.GuestServer(), want)
	}
}

func checkKubeconfigs(t *testing.T, c *Cluster) {
	for _, server := range []string{c.Server(), c.GuestServer()} {
		raw, err := c.KubeconfigFor(server)
		if err != nil {
			t.Fatal(err)
		}
		cfg, err := clientcmd.RESTConfigFromKubeConfig(raw)
		if err != nil {
			t.Fatal(err)
		}
		if cfg.Host != server || len(cfg.CAData) == 0 || len(cfg.CertData) == 0 {
			t.Errorf("kubeconfig for %s: host %q, CA %d bytes, cert %d bytes", server, cfg.Host, len(cfg.CAData), len(cfg.CertData))
		}
	}
	// The host kubeconfig really works.
	raw, err := c.KubeconfigFor(c.Server())
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := clientcmd.RESTConfigFromKubeConfig(raw)
	if err != nil {
		t.Fatal(err)
	}
	if err := newClient(t, cfg).List(context.Background(), &corev1.NamespaceList{}); err != nil {
		t.Errorf("admin kubeconfig for the host: %v", err)
	}
}

func checkCRDs(t *testing.T, c *Cluster) {
	cs, err := apiextensionsclient.NewForConfig(c.RESTConfig())
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{
		"clusterversions.config.openshift.io",
		"infrastructures.config.openshift.io",
		"machines.machine.openshift.io",
		"machinesets.machine.openshift.io",
		"machinehealthchecks.machine.openshift.io",
		"baremetalhosts.metal3.io",
	} {
		crd, err := cs.ApiextensionsV1().CustomResourceDefinitions().Get(context.Background(), name, metav1.GetOptions{})
		if err != nil {
			t.Errorf("CRD %s: %v", name, err)
			continue
		}
		if !crdCondition(crd, apiextensionsv1.Established) {
			t.Errorf("CRD %s is not Established", name)
		}
	}
}

func crdCondition(crd *apiextensionsv1.CustomResourceDefinition, t apiextensionsv1.CustomResourceDefinitionConditionType) bool {
	for _, c := range crd.Status.Conditions {
		if c.Type == t {
			return c.Status == apiextensionsv1.ConditionTrue
		}
	}
	return false
}

func checkInfrastructure(t *testing.T, c *Cluster, cl client.Client) {
	infra := &configv1.Infrastructure{}
	if err := cl.Get(context.Background(), client.ObjectKey{Name: InfrastructureName}, infra); err != nil {
		t.Fatal(err)
	}
	st := infra.Status
	if !strings.HasPrefix(st.InfrastructureName, "up-") || st.InfrastructureName != c.InfrastructureName() {
		t.Errorf("infrastructureName %q, want up-<suffix> = %q", st.InfrastructureName, c.InfrastructureName())
	}
	if infra.Spec.PlatformSpec.Type != configv1.BareMetalPlatformType || st.Platform != configv1.BareMetalPlatformType {
		t.Errorf("platform spec %q status %q, want BareMetal", infra.Spec.PlatformSpec.Type, st.Platform)
	}
	ps := st.PlatformStatus
	if ps == nil || ps.Type != configv1.BareMetalPlatformType || ps.BareMetal == nil {
		t.Fatalf("platformStatus %+v, want type BareMetal with baremetal status", ps)
	}
	if got := ps.BareMetal.APIServerInternalIPs; len(got) != 1 || got[0] != GuestGateway {
		t.Errorf("apiServerInternalIPs %v, want [%s]", got, GuestGateway)
	}
	if st.APIServerURL != c.Server() || st.APIServerInternalURL != c.GuestServer() {
		t.Errorf("API server URLs %q / %q, want %q / %q", st.APIServerURL, st.APIServerInternalURL, c.Server(), c.GuestServer())
	}
}

func checkClusterVersion(t *testing.T, c *Cluster, cl client.Client, updates []configv1.Release) {
	cv := &configv1.ClusterVersion{}
	if err := cl.Get(context.Background(), client.ObjectKey{Name: cvo.Name}, cv); err != nil {
		t.Fatal(err)
	}
	if string(cv.Spec.ClusterID) != c.ClusterID() || cv.Spec.ClusterID == "" || cv.Spec.Channel != "stable-4.21" {
		t.Errorf("spec clusterID %q channel %q, want %q stable-4.21", cv.Spec.ClusterID, cv.Spec.Channel, c.ClusterID())
	}
	st := cv.Status
	want := LabRelease(DefaultVersion)
	if st.Desired.Version != want.Version || st.Desired.Image != want.Image {
		t.Errorf("desired %+v, want %+v", st.Desired, want)
	}
	if len(st.History) != 1 || st.History[0].State != configv1.CompletedUpdate || st.History[0].Version != DefaultVersion ||
		st.History[0].CompletionTime == nil || st.History[0].Image != want.Image {
		t.Errorf("history %+v, want one Completed entry for %s", st.History, DefaultVersion)
	}
	if len(st.AvailableUpdates) != len(updates) || st.AvailableUpdates[1].Image != updates[1].Image {
		t.Errorf("availableUpdates %+v, want %+v", st.AvailableUpdates, updates)
	}
	if st.ObservedGeneration != cv.Generation {
		t.Errorf("observedGeneration %d, generation %d", st.ObservedGeneration, cv.Generation)
	}
	for typ, status := range map[configv1.ClusterStatusConditionType]configv1.ConditionStatus{
		configv1.OperatorAvailable:   configv1.ConditionTrue,
		configv1.OperatorProgressing: configv1.ConditionFalse,
		cvo.ConditionFailing:         configv1.ConditionFalse,
	} {
		if got := cvo.FindCondition(st.Conditions, typ); got == nil || got.Status != status {
			t.Errorf("condition %s = %+v, want %s", typ, got, status)
		}
	}
}

func checkTeardown(t *testing.T, c *Cluster, rec *recorder) {
	if n := rec.count(); n != 4 { // etcd, kube-apiserver, kube-controller-manager, the directory
		t.Errorf("tracker holds %d resources while running, want 4", n)
	}
	u, err := url.Parse(c.Server())
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Stop(); err != nil {
		t.Fatal(err)
	}
	if err := c.Stop(); err != nil {
		t.Errorf("second Stop: %v", err)
	}
	if _, err := os.Stat(c.Dir()); !os.IsNotExist(err) {
		t.Errorf("cluster dir still exists after Stop: %v", err)
	}
	if n := rec.count(); n != 0 {
		t.Errorf("tracker still holds %d resources after Stop", n)
	}
	if conn, err := net.DialTimeout("tcp", u.Host, time.Second); err == nil {
		conn.Close()
		t.Errorf("API server port %s still listens after Stop", u.Host)
	}
}

func TestStartFailureCleansUp(t *testing.T) {
	// An invalid release is refused before anything is made.
	if _, err := Start(context.Background(), Options{Release: configv1.Release{Version: "four"}}); err == nil ||
		!strings.Contains(err.Error(), "release") {
		t.Errorf("Start with release version \"four\": %v, want an error about the release", err)
	}
	// Without control-plane binaries Start fails, says so and leaves no
	// directory behind.
	t.Setenv("PARITYLAB_BIN_DIR", t.TempDir())
	dir := filepath.Join(t.TempDir(), "spoke")
	_, err := Start(context.Background(), Options{Dir: dir})
	if err == nil || !strings.Contains(err.Error(), "make deps") {
		t.Fatalf("Start without binaries: %v, want an error saying to run make deps", err)
	}
	if _, statErr := os.Stat(dir); !os.IsNotExist(statErr) {
		t.Errorf("dir left behind after failed start: %v", statErr)
	}
}
