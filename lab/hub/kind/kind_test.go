package kind

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr/funcr"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	certutil "k8s.io/client-go/util/cert"
	"sigs.k8s.io/kind/pkg/apis/config/defaults"
	"sigs.k8s.io/kind/pkg/apis/config/v1alpha4"
	kindexec "sigs.k8s.io/kind/pkg/exec"
	kindlog "sigs.k8s.io/kind/pkg/log"
)

// fakeProvider records calls and keeps a set of existing clusters, the way
// kind's provider sees the container engine.
type fakeProvider struct {
	host string // API server host:port in the kubeconfig it returns

	clusters []string

	createErr     error
	createLeaves  bool // on createErr, leave the cluster behind
	kubeconfigErr error
	listErr       error
	deleteErr     error

	creates     []createRequest
	kubeconfigs []bool // the internal argument of each KubeConfig call
	deletes     []string
}

func (f *fakeProvider) Create(req createRequest) error {
	f.creates = append(f.creates, req)
	if f.createErr != nil {
		if f.createLeaves {
			f.clusters = append(f.clusters, req.Name)
		}
		return f.createErr
	}
	f.clusters = append(f.clusters, req.Name)
	// kind merges the kubeconfig into the path it is given.
	if req.KubeconfigPath != "" {
		if err := os.WriteFile(req.KubeconfigPath, []byte("merged by kind"), 0o600); err != nil {
			return err
		}
	}
	return nil
}

func (f *fakeProvider) KubeConfig(name string, internal bool) (string, error) {
	f.kubeconfigs = append(f.kubeconfigs, internal)
	if f.kubeconfigErr != nil {
		return "", f.kubeconfigErr
	}
	if !slices.Contains(f.clusters, name) {
		return "", fmt.Errorf("could not locate any control plane nodes for cluster named '%s'", name)
	}
	host := f.host
	if internal {
		host = name + "-control-plane:6443"
	}
	return testKubeconfig(name, "https://"+host)
}

func (f *fakeProvider) Delete(name, _ string) error {
	f.deletes = append(f.deletes, name)
	if f.deleteErr != nil {
		return f.deleteErr
	}
	f.clusters = slices.DeleteFunc(f.clusters, func(c string) bool { return c == name })
	return nil
}

func (f *fakeProvider) List() ([]string, error) {
	if f.listErr != nil {
		return nil, f.listErr
	}
	return slices.Clone(f.clusters), nil
}

var (
	certOnce         sync.Once
	certPEM, keyPEM  []byte
	errGeneratingPEM error
)

// testKubeconfig is a kubeconfig shaped like kind's: cluster, user and
// context kind-<name>, CA and client certificate embedded.
func testKubeconfig(name, server string) (string, error) {
	certOnce.Do(func() {
		certPEM, keyPEM, errGeneratingPEM = certutil.GenerateSelfSignedCertKey(
			"kubernetes", []net.IP{net.ParseIP("127.0.0.1")}, []string{"localhost"})
	})
	if errGeneratingPEM != nil {
		return "", errGeneratingPEM
	}
	key := "kind-" + name
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters[key] = &clientcmdapi.Cluster{Server: server, CertificateAuthorityData: certPEM}
	cfg.AuthInfos[key] = &clientcmdapi.AuthInfo{ClientCertificateData: certPEM, ClientKeyData: keyPEM}
	cfg.Contexts[key] = &clientcmdapi.Context{Cluster: key, AuthInfo: key}
	cfg.CurrentContext = key
	b, err := clientcmd.Write(*cfg)
	return string(b), err
}

func newFakeHub(t *testing.T, opts Options, fake *fakeProvider) *kindHub {
	t.Helper()
	if fake.host == "" {
		fake.host = "127.0.0.1:40123"
	}
	return newHub(opts, func(kindlog.Logger) (clusterProvider, error) { return fake, nil })
}

func TestClusterConfigSingleNode(t *testing.T) {
	cfg := clusterConfig("lab", "example.com/node:v1", 0)
	if cfg.Kind != "Cluster" || cfg.APIVersion != "kind.x-k8s.io/v1alpha4" {
		t.Errorf("type meta = %+v, want kind.x-k8s.io/v1alpha4 Cluster", cfg.TypeMeta)
	}
	if cfg.Name != "lab" {
		t.Errorf("name = %q, want lab", cfg.Name)
	}
	if len(cfg.Nodes) != 1 || cfg.Nodes[0].Role != v1alpha4.ControlPlaneRole {
		t.Fatalf("nodes = %+v, want one control-plane node", cfg.Nodes)
	}
	if cfg.Nodes[0].Image != "example.com/node:v1" {
		t.Errorf("image = %q, want example.com/node:v1", cfg.Nodes[0].Image)
	}
	if cfg.Networking.APIServerAddress != "127.0.0.1" {
		t.Errorf("API server address = %q, want 127.0.0.1", cfg.Networking.APIServerAddress)
	}
	for _, n := range cfg.Nodes {
		if len(n.ExtraPortMappings) != 0 {
			t.Errorf("node %s publishes ports %+v", n.Role, n.ExtraPortMappings)
		}
	}
}

func TestClusterConfigWorkers(t *testing.T) {
	cfg := clusterConfig("lab", "example.com/node:v2", 2)
	roles := make([]v1alpha4.NodeRole, 0, len(cfg.Nodes))
	for _, n := range cfg.Nodes {
		roles = append(roles, n.Role)
		if n.Image != "example.com/node:v2" {
			t.Errorf("%s node image = %q, want example.com/node:v2", n.Role, n.Image)
		}
	}
	want := []v1alpha4.NodeRole{v1alpha4.ControlPlaneRole, v1alpha4.WorkerRole, v1alpha4.WorkerRole}
	if !slices.Equal(roles, want) {
		t.Errorf("roles = %v, want %v", roles, want)
	}
	// kind's own defaulting must keep what we set.
	v1alpha4.SetDefaultsCluster(cfg)
	if cfg.Networking.APIServerAddress != "127.0.0.1" || cfg.Nodes[2].Image != "example.com/node:v2" {
		t.Errorf("after kind defaulting: address %q, worker image %q",
			cfg.Networking.APIServerAddress, cfg.Nodes[2].Image)
	}
}

func TestNewDefaults(t *testing.T) {
	h := New(Options{})
	if h.Backend() != "kind" {
		t.Errorf("Backend() = %q, want kind", h.Backend())
	}
	if h.WebhookHost() != "" {
		t.Errorf("WebhookHost() = %q, want empty", h.WebhookHost())
	}
	kh := h.(*kindHub)
	if kh.opts.Name != "paritylab" {
		t.Errorf("name = %q, want paritylab", kh.opts.Name)
	}
	if kh.opts.Image != defaults.Image || !strings.HasPrefix(kh.opts.Image, "kindest/node:") {
		t.Errorf("image = %q, want kind's default %q", kh.opts.Image, defaults.Image)
	}
	if kh.opts.WaitForReady != DefaultWaitForReady {
		t.Errorf("wait = %v, want %v", kh.opts.WaitForReady, DefaultWaitForReady)
	}
	if h.RESTConfig() != nil {
		t.Error("RESTConfig() before Create is not nil")
	}
	if _, err := h.Kubeconfig(); err == nil {
		t.Error("Kubeconfig() before Create: no error")
	}
	if err := h.Dispose(context.Background()); err != nil {
		t.Errorf("Dispose before Create: %v", err)
	}
}

func TestCreateKubeconfigDispose(t *testing.T) {
	ctx := context.Background()
	kubeconfigPath := filepath.Join(t.TempDir(), "sub", "hub.kubeconfig")
	fake := &fakeProvider{host: "127.0.0.1:40123"}
	h := newFakeHub(t, Options{
		Name:           "lab1",
		Image:          "example.com/node:v1",
		Workers:        1,
		KubeconfigPath: kubeconfigPath,
		WaitForReady:   90 * time.Second,
	}, fake)

	if err := h.Create(ctx); err != nil {
		t.Fatalf("Create: %v", err)
	}

	if len(fake.creates) != 1 {
		t.Fatalf("provider Create called %d times, want 1", len(fake.creates))
	}
	req := fake.creates[0]
	if req.Name != "lab1" || req.Image != "example.com/node:v1" || req.WaitForReady != 90*time.Second {
		t.Errorf("create request name %q image %q wait %v", req.Name, req.Image, req.WaitForReady)
	}
	if req.Config == nil || req.Config.Name != "lab1" || len(req.Config.Nodes) != 2 ||
		req.Config.Networking.APIServerAddress != "127.0.0.1" || req.Config.Nodes[1].Image != "example.com/node:v1" {
		t.Errorf("create config = %+v", req.Config)
	}
	scratch := req.KubeconfigPath
	if scratch == "" || scratch == kubeconfigPath {
		t.Errorf("kind merges into %q; want a private scratch file, not %q", scratch, kubeconfigPath)
	}
	if !slices.Equal(fake.kubeconfigs, []bool{false}) {
		t.Errorf("KubeConfig internal args = %v, want [false] (external)", fake.kubeconfigs)
	}

	info, err := os.Stat(kubeconfigPath)
	if err != nil {
		t.Fatalf("kubeconfig file: %v", err)
	}
	if mode := info.Mode().Perm(); mode != 0o600 {
		t.Errorf("kubeconfig mode = %o, want 600", mode)
	}
	onDisk, err := os.ReadFile(kubeconfigPath)
	if err != nil {
		t.Fatal(err)
	}
	kc, err := h.Kubeconfig()
	if err != nil {
		t.Fatalf("Kubeconfig: %v", err)
	}
	if string(onDisk) != string(kc) {
		t.Error("kubeconfig on disk differs from Kubeconfig()")
	}
	parsed, err := clientcmd.Load(kc)
	if err != nil {
		t.Fatalf("Kubeconfig() does not parse: %v", err)
	}
	if parsed.CurrentContext != "kind-lab1" {
		t.Errorf("current context = %q, want kind-lab1", parsed.CurrentContext)
	}

	rc := h.RESTConfig()
	if rc == nil {
		t.Fatal("RESTConfig() is nil after Create")
	}
	if rc.Host != "https://127.0.0.1:40123" {
		t.Errorf("RESTConfig host = %q, want https://127.0.0.1:40123", rc.Host)
	}
	if len(rc.CAData) == 0 || len(rc.CertData) == 0 || len(rc.KeyData) == 0 {
		t.Error("RESTConfig lacks CA or client credentials")
	}
	rc.Host = "mutated"
	if h.RESTConfig().Host == "mutated" {
		t.Error("RESTConfig() returns the hub's own config, not a copy")
	}

	if err := h.Create(ctx); err == nil {
		t.Error("second Create: no error")
	}

	if err := h.Dispose(ctx); err != nil {
		t.Fatalf("Dispose: %v", err)
	}
	if err := h.Dispose(ctx); err != nil {
		t.Fatalf("second Dispose: %v", err)
	}
	if !slices.Equal(fake.deletes, []string{"lab1"}) {
		t.Errorf("deletes = %v, want [lab1]", fake.deletes)
	}
	if len(fake.clusters) != 0 {
		t.Errorf("clusters left: %v", fake.clusters)
	}
	if _, err := os.Stat(kubeconfigPath); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("kubeconfig file after Dispose: %v", err)
	}
	if _, err := os.Stat(filepath.Dir(scratch)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("scratch directory after Dispose: %v", err)
	}
	if h.RESTConfig() != nil {
		t.Error("RESTConfig() after Dispose is not nil")
	}
}

func TestCreateWithoutKubeconfigPath(t *testing.T) {
	fake := &fakeProvider{}
	h := newFakeHub(t, Options{}, fake)
	if err := h.Create(context.Background()); err != nil {
		t.Fatalf("Create: %v", err)
	}
	if got := fake.creates[0].Name; got != "paritylab" {
		t.Errorf("cluster name = %q, want paritylab", got)
	}
	if got := fake.creates[0].Config.Nodes; len(got) != 1 || got[0].Image != defaults.Image {
		t.Errorf("nodes = %+v, want one on %s", got, defaults.Image)
	}
	if kc, err := h.Kubeconfig(); err != nil || len(kc) == 0 {
		t.Errorf("Kubeconfig() = %d bytes, %v", len(kc), err)
	}
	if err := h.Dispose(context.Background()); err != nil {
		t.Fatalf("Dispose: %v", err)
	}
	if !slices.Equal(fake.deletes, []string{"paritylab"}) {
		t.Errorf("deletes = %v, want [paritylab]", fake.deletes)
	}
}

func TestCreateExistingClusterFails(t *testing.T) {
	fake := &fakeProvider{clusters: []string{"other", "lab1"}}
	kubeconfigPath := filepath.Join(t.TempDir(), "kubeconfig")
	h := newFakeHub(t, Options{Name: "lab1", KubeconfigPath: kubeconfigPath}, fake)

	err := h.Create(context.Background())
	if !errors.Is(err, ErrClusterExists) {
		t.Fatalf("Create = %v, want ErrClusterExists", err)
	}
	if !strings.Contains(err.Error(), "lab1") || !strings.Contains(err.Error(), "already exists") {
		t.Errorf("error %q does not name the cluster and say it exists", err)
	}
	if len(fake.creates) != 0 {
		t.Errorf("provider Create called: %+v", fake.creates)
	}
	if _, err := os.Stat(kubeconfigPath); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("kubeconfig written for a cluster that is not ours: %v", err)
	}
	// The existing cluster is not ours: Dispose must leave it.
	if err := h.Dispose(context.Background()); err != nil {
		t.Fatalf("Dispose: %v", err)
	}
	if len(fake.deletes) != 0 || !slices.Contains(fake.clusters, "lab1") {
		t.Errorf("Dispose deleted a pre-existing cluster: deletes %v, clusters %v", fake.deletes, fake.clusters)
	}
}

func TestCreateProviderErrorWrapped(t *testing.T) {
	boom := errors.New("kubeadm init failed")
	fake := &fakeProvider{createErr: boom}
	h := newFakeHub(t, Options{Name: "lab2"}, fake)

	err := h.Create(context.Background())
	if !errors.Is(err, boom) {
		t.Fatalf("Create = %v, want it to wrap the provider error", err)
	}
	if !strings.Contains(err.Error(), "create kind cluster lab2: ") {
		t.Errorf("error %q lacks the cluster name", err)
	}
	if h.RESTConfig() != nil {
		t.Error("RESTConfig() after failed Create is not nil")
	}
	// kind cleaned up after itself: nothing to delete.
	if err := h.Dispose(context.Background()); err != nil {
		t.Fatalf("Dispose after failed Create: %v", err)
	}
	if len(fake.deletes) != 0 {
		t.Errorf("deleted a cluster that does not exist: %v", fake.deletes)
	}
}

func TestDisposeAfterFailedCreateDeletesLeftovers(t *testing.T) {
	fake := &fakeProvider{createErr: errors.New("wait for ready timed out"), createLeaves: true}
	h := newFakeHub(t, Options{Name: "lab3"}, fake)
	if err := h.Create(context.Background()); err == nil {
		t.Fatal("Create: no error")
	}
	for range 2 {
		if err := h.Dispose(context.Background()); err != nil {
			t.Fatalf("Dispose: %v", err)
		}
	}
	if !slices.Equal(fake.deletes, []string{"lab3"}) {
		t.Errorf("deletes = %v, want [lab3]", fake.deletes)
	}
}

func TestKubeconfigErrorLeavesClusterForDispose(t *testing.T) {
	fake := &fakeProvider{kubeconfigErr: errors.New("no control plane")}
	kubeconfigPath := filepath.Join(t.TempDir(), "kubeconfig")
	h := newFakeHub(t, Options{Name: "lab4", KubeconfigPath: kubeconfigPath}, fake)
	err := h.Create(context.Background())
	if err == nil || !strings.Contains(err.Error(), "create kind cluster lab4: get kubeconfig: no control plane") {
		t.Fatalf("Create = %v", err)
	}
	if _, err := os.Stat(kubeconfigPath); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("kubeconfig file after failed Create: %v", err)
	}
	if err := h.Dispose(context.Background()); err != nil {
		t.Fatalf("Dispose: %v", err)
	}
	if !slices.Equal(fake.deletes, []string{"lab4"}) {
		t.Errorf("deletes = %v, want [lab4]", fake.deletes)
	}
}

func TestDisposeTreatsVanishedClusterAsDeleted(t *testing.T) {
	fake := &fakeProvider{}
	h := newFakeHub(t, Options{Name: "lab5"}, fake)
	if err := h.Create(context.Background()); err != nil {
		t.Fatal(err)
	}
	fake.clusters = nil // removed behind our back, e.g. `kind delete cluster`
	if err := h.Dispose(context.Background()); err != nil {
		t.Fatalf("Dispose: %v", err)
	}
	if len(fake.deletes) != 0 {
		t.Errorf("deletes = %v, want none", fake.deletes)
	}
}

func TestDisposeRetriesAfterDeleteError(t *testing.T) {
	fake := &fakeProvider{}
	h := newFakeHub(t, Options{Name: "lab6"}, fake)
	if err := h.Create(context.Background()); err != nil {
		t.Fatal(err)
	}
	fake.deleteErr = errors.New("engine hiccup")
	err := h.Dispose(context.Background())
	if !errors.Is(err, fake.deleteErr) || !strings.Contains(err.Error(), "delete kind cluster lab6") {
		t.Fatalf("Dispose = %v, want wrapped delete error", err)
	}
	fake.deleteErr = nil
	if err := h.Dispose(context.Background()); err != nil {
		t.Fatalf("second Dispose: %v", err)
	}
	if !slices.Equal(fake.deletes, []string{"lab6", "lab6"}) || len(fake.clusters) != 0 {
		t.Errorf("deletes %v, clusters left %v", fake.deletes, fake.clusters)
	}
}

func TestCreateEngineNotAnswering(t *testing.T) {
	fake := &fakeProvider{listErr: fmt.Errorf("failed to list clusters: %w", &kindexec.RunError{
		Command: []string{"docker", "ps", "-a"},
		Output:  []byte("Cannot connect to the Docker daemon at unix:///var/run/docker.sock.\n"),
		Inner:   errors.New("exit status 1"),
	})}
	h := newFakeHub(t, Options{}, fake)
	err := h.Create(context.Background())
	if !errors.Is(err, ErrNoContainerEngine) {
		t.Fatalf("Create = %v, want ErrNoContainerEngine", err)
	}
	if !strings.Contains(err.Error(), "Cannot connect to the Docker daemon") {
		t.Errorf("error %q lacks the engine's output", err)
	}
	if len(fake.creates) != 0 {
		t.Error("provider Create called without an engine")
	}
}

func TestCreateRejectsBadInput(t *testing.T) {
	fake := &fakeProvider{}
	h := newFakeHub(t, Options{Workers: -1}, fake)
	if err := h.Create(context.Background()); err == nil || !strings.Contains(err.Error(), "negative worker count") {
		t.Errorf("Create with Workers -1 = %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	h = newFakeHub(t, Options{}, fake)
	if err := h.Create(ctx); !errors.Is(err, context.Canceled) {
		t.Errorf("Create with cancelled context = %v", err)
	}
	if len(fake.creates) != 0 {
		t.Errorf("provider Create called: %+v", fake.creates)
	}
}

func TestRESTConfigRejectsNonLoopback(t *testing.T) {
	fake := &fakeProvider{host: "10.0.0.5:6443"}
	h := newFakeHub(t, Options{Name: "lab7"}, fake)
	err := h.Create(context.Background())
	if err == nil || !strings.Contains(err.Error(), "not on loopback") {
		t.Fatalf("Create = %v, want a loopback error", err)
	}
	if err := h.Dispose(context.Background()); err != nil || !slices.Equal(fake.deletes, []string{"lab7"}) {
		t.Errorf("Dispose = %v, deletes %v", err, fake.deletes)
	}
}

func TestWriteKubeconfigFixesMode(t *testing.T) {
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(path, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := writeKubeconfig(path, []byte("new")); err != nil {
		t.Fatal(err)
	}
	info, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if info.Mode().Perm() != 0o600 {
		t.Errorf("mode = %o, want 600", info.Mode().Perm())
	}
	if b, _ := os.ReadFile(path); string(b) != "new" {
		t.Errorf("content = %q, want new", b)
	}
	entries, _ := os.ReadDir(filepath.Dir(path))
	if len(entries) != 1 {
		t.Errorf("temporary files left: %v", entries)
	}
}

func TestLogAdapter(t *testing.T) {
	var lines []string
	l := funcr.New(func(prefix, args string) {
		lines = append(lines, prefix+" "+args)
	}, funcr.Options{Verbosity: 1})
	a := newLogAdapter(l)

	a.V(0).Infof("Creating cluster %q ...\n", "lab")
	a.Warnf("name %s is long", "lab")
	a.Errorf("failed: %d", 3)
	a.V(1).Info("debug")
	a.V(2).Info("trace")

	if !a.V(1).Enabled() || a.V(2).Enabled() {
		t.Errorf("Enabled: V(1) %v, V(2) %v; want true, false", a.V(1).Enabled(), a.V(2).Enabled())
	}
	got := strings.Join(lines, "\n")
	for _, want := range []string{
		`"msg"="Creating cluster \"lab\" ..."`,
		`"msg"="name lab is long" "level"="warning"`,
		`"msg"="failed: 3" "error"=null`,
		`"msg"="debug"`,
	} {
		if !strings.Contains(got, want) {
			t.Errorf("log lacks %s:\n%s", want, got)
		}
	}
	if strings.Contains(got, "trace") {
		t.Errorf("V(2) logged at verbosity 1:\n%s", got)
	}
	if !strings.HasPrefix(lines[0], "kind ") {
		t.Errorf("line %q not named kind", lines[0])
	}
}
