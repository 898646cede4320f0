package assisted

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"path/filepath"
	"sync"
	"testing"
	"time"

	configv1 "github.com/openshift/api/config/v1"
	hivev1 "github.com/openshift/hive/apis/hive/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/paritylab/paritylab/lab/agentbin"
	"github.com/paritylab/paritylab/lab/assisted/agentapi"
	"github.com/paritylab/paritylab/lab/controllers"
	"github.com/paritylab/paritylab/lab/controlplane"
	"github.com/paritylab/paritylab/lab/crds"
	"github.com/paritylab/paritylab/lab/images"
	agentv1beta1 "github.com/paritylab/paritylab/providers/thirdparty/agentinstall/v1beta1"
)

// noSpokes refuses to create workload clusters: these tests stop before
// an install starts.
type noSpokes struct{}

func (noSpokes) Create(context.Context, ClusterKey, configv1.Release) (Spoke, error) {
	return nil, errors.New("no workload clusters in this test")
}
func (noSpokes) Get(ClusterKey) Spoke                     { return nil }
func (noSpokes) Delete(context.Context, ClusterKey) error { return nil }

// testAgentPath is the agent binary, found or built once for all the
// tests: parallel tests building it at once would write the same file.
var testAgentPath = sync.OnceValues(func() (string, error) {
	cache, err := images.CacheDir()
	if err != nil {
		return "", err
	}
	return agentbin.Path(context.Background(), cache)
})

// hub is a real API server with the assisted service running in process.
type hub struct {
	svc *Service
	c   client.Client
	cp  *controlplane.ControlPlane
}

func startHub(t *testing.T) *hub {
	t.Helper()
	return startHubWith(t, noSpokes{})
}

// startHubWith runs the hub with the given workload clusters and, beside
// the assisted service, the given components.
func startHubWith(t *testing.T, spokes Spokes, more ...controllers.Component) *hub {
	t.Helper()
	return startHubWithOptions(t, Options{Spokes: spokes}, more...)
}

// startHubWithOptions runs the hub with a service of the given options
// (images and agent filled in) beside the given components.
func startHubWithOptions(t *testing.T, opts Options, more ...controllers.Component) *hub {
	t.Helper()
	ctx := context.Background()
	cp, err := controlplane.Start(ctx, controlplane.Options{Name: "assisted-test", Dir: filepath.Join(t.TempDir(), "hub")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cp.Stop() })
	store, err := images.Open(images.StoreOptions{})
	if err != nil {
		t.Fatal(err)
	}
	agent, err := testAgentPath()
	if err != nil {
		t.Fatal(err)
	}
	opts.Images, opts.Agent = store, agent
	svc, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	host, err := controllers.Start(ctx, controllers.Options{
		RESTConfig: cp.RESTConfig(), WebhookHost: "127.0.0.1", CertDir: t.TempDir(),
		Components: append([]controllers.Component{svc, &controllers.CRDsOnly{ComponentName: "metal3", Sets: []crds.Set{crds.Metal3()}}}, more...),
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = host.Stop(context.Background()) })
	c, err := client.New(cp.RESTConfig(), client.Options{Scheme: host.Manager().GetScheme()})
	if err != nil {
		t.Fatal(err)
	}
	return &hub{svc: svc, c: c, cp: cp}
}

func (h *hub) namespace(t *testing.T) string {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "site-"}}
	if err := h.c.Create(context.Background(), ns); err != nil {
		t.Fatal(err)
	}
	return ns.Name
}

// infraEnv creates a pull secret and an InfraEnv and waits for its image.
func (h *hub) infraEnv(t *testing.T, ns string, clusterRef *agentv1beta1.ClusterReference) *agentv1beta1.InfraEnv {
	t.Helper()
	return h.infraEnvWith(t, ns, func(ie *agentv1beta1.InfraEnv) { ie.Spec.ClusterRef = clusterRef })
}

// infraEnvWith makes a pull secret and the InfraEnv "site" of ns, changed
// by change, and waits for its image.
func (h *hub) infraEnvWith(t *testing.T, ns string, change func(*agentv1beta1.InfraEnv)) *agentv1beta1.InfraEnv {
	t.Helper()
	ctx := context.Background()
	ps := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "pull-secret", Namespace: ns},
		StringData: map[string]string{".dockerconfigjson": `{"auths":{}}`}, Type: corev1.SecretTypeDockerConfigJson}
	if err := h.c.Create(ctx, ps); err != nil {
		t.Fatal(err)
	}
	ie := &agentv1beta1.InfraEnv{ObjectMeta: metav1.ObjectMeta{Name: "site", Namespace: ns},
		Spec: agentv1beta1.InfraEnvSpec{PullSecretRef: &corev1.LocalObjectReference{Name: "pull-secret"}}}
	change(ie)
	if err := h.c.Create(ctx, ie); err != nil {
		t.Fatal(err)
	}
	h.eventually(t, "InfraEnv image", func() bool {
		_ = h.c.Get(ctx, client.ObjectKeyFromObject(ie), ie)
		return ie.Status.ISODownloadURL != ""
	})
	return ie
}

func (h *hub) eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	err := wait.PollUntilContextTimeout(context.Background(), 100*time.Millisecond, 60*time.Second, true, func(context.Context) (bool, error) {
		return cond(), nil
	})
	if err != nil {
		t.Fatalf("timed out waiting for %s", what)
	}
}

// registerHost registers a host with an InfraEnv and reports its
// inventory (one interface, mac), as the discovery agent does; it returns
// the host's Agent, by key.
func (h *hub) registerHost(t *testing.T, ie *agentv1beta1.InfraEnv, host, mac string, inv agentv1beta1.HostInventory) *agentv1beta1.Agent {
	t.Helper()
	id, token := string(ie.UID), h.svc.tokens.forInfraEnv(string(ie.UID))
	if code, e := h.agentCall(t, "POST", agentapi.RegisterPath(id), token, agentapi.RegisterRequest{HostID: host}); code != 201 {
		t.Fatalf("register %s: %d %s", host, code, e.Reason)
	}
	inv.Interfaces = []agentv1beta1.HostInterface{{Name: "eth0", MacAddress: mac, IPv4Addresses: []string{"10.100.0.15/24"}}}
	raw, _ := json.Marshal(inv)
	if code, e := h.agentCall(t, "POST", agentapi.InstructionsPath(id, host), token, agentapi.StepReply{StepID: "i", StepType: "inventory", Output: string(raw)}); code != 204 {
		t.Fatalf("inventory of %s: %d %s", host, code, e.Reason)
	}
	return &agentv1beta1.Agent{ObjectMeta: metav1.ObjectMeta{Namespace: ie.Namespace, Name: host}}
}

// agentCall is an agent API request as a real agent sends it.
func (h *hub) agentCall(t *testing.T, method, path, token string, body any) (int, agentapi.APIError) {
	t.Helper()
	var r io.Reader
	switch b := body.(type) {
	case nil:
	case []byte:
		r = bytes.NewReader(b)
	default:
		raw, _ := json.Marshal(b)
		r = bytes.NewReader(raw)
	}
	req, _ := http.NewRequest(method, h.svc.URL()+path, r)
	if token != "" {
		req.Header.Set(agentapi.AuthHeader, "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var apiErr agentapi.APIError
	_ = json.Unmarshal(raw, &apiErr)
	return resp.StatusCode, apiErr
}

func hostInventory(cpus, memGiB, diskGB int64) agentv1beta1.HostInventory {
	return agentv1beta1.HostInventory{
		Hostname: "host-a",
		CPU:      agentv1beta1.HostCPU{Count: cpus, Architecture: "x86_64"},
		Memory:   agentv1beta1.HostMemory{PhysicalBytes: memGiB << 30, UsableBytes: memGiB << 30},
		Disks: []agentv1beta1.HostDisk{{ID: "/dev/vda", Path: "/dev/vda", Name: "vda", SizeBytes: diskGB * 1e9,
			InstallationEligibility: agentv1beta1.HostInstallationEligibility{Eligible: true}}},
		Interfaces: []agentv1beta1.HostInterface{{Name: "eth0", MacAddress: "52:54:00:00:00:01", IPv4Addresses: []string{"10.100.0.15/24"}}},
	}
}

var _ = hivev1.ClusterDeployment{}
