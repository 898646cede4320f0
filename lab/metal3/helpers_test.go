package metal3

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	bmov1alpha1 "github.com/metal3-io/baremetal-operator/apis/metal3.io/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/paritylab/paritylab/lab/controllers"
	"github.com/paritylab/paritylab/lab/controlplane"
	"github.com/paritylab/paritylab/lab/redfish"
	"github.com/paritylab/paritylab/lab/redfish/memory"
	"github.com/paritylab/paritylab/lab/redfish/redfishtest"
)

// suite is what every test shares: one API server with the metal3 CRDs
// and one Operator, driven by each test's own BMC in its own namespace.
var suite struct {
	cfg      *rest.Config
	client   client.Client
	deployer *fakeDeployer
	steps    *fakeSteps
	// ramdisk is the ISO the suite's image provider makes every
	// PreprovisioningImage boot.
	ramdisk string
}

// testOptions make retries and polls quick; they change no semantics.
// Hosts use PreprovisioningImages, as on an OpenShift hub.
func testOptions(d Deployer, steps CustomDeployer) Options {
	return Options{
		Deployer: d, PreprovisioningImages: true, CustomDeployer: steps, DeployPollInterval: 200 * time.Millisecond, InBandPowerOffTimeout: time.Second, Concurrency: 4,
		PollInterval: 500 * time.Millisecond, PowerTimeout: 3 * time.Second, SoftPowerOffTimeout: 2 * time.Second,
		RequestTimeout: 20 * time.Second, ErrorBackoff: 100 * time.Millisecond, MaxErrorBackoff: time.Second,
	}
}

// TestMain starts a control plane (real etcd and kube-apiserver) and the
// Operator in a controller manager. METAL3_TEST_LOG=1 shows the
// controller's log.
func TestMain(m *testing.M) {
	ctrllog.SetLogger(logr.New(ctrllog.NullLogSink{}))
	os.Exit(runSuite(m))
}

func runSuite(m *testing.M) int {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	dir, err := os.MkdirTemp("", "paritylab-metal3-test-")
	if err != nil {
		return fail(err)
	}
	defer os.RemoveAll(dir)
	cp, err := controlplane.Start(ctx, controlplane.Options{Name: "metal3", Dir: filepath.Join(dir, "cp")})
	if err != nil {
		return fail(err)
	}
	defer cp.Stop()
	suite.cfg = cp.RESTConfig()
	ramdisk := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_, _ = w.Write(redfishtest.ImageContent)
	}))
	defer ramdisk.Close()
	suite.ramdisk = ramdisk.URL + "/ramdisk.iso"
	suite.deployer, suite.steps = newFakeDeployer(), newFakeSteps()
	op, err := New(testOptions(suite.deployer, suite.steps))
	if err != nil {
		return fail(err)
	}
	host, err := controllers.Start(ctx, controllers.Options{
		RESTConfig: cp.RESTConfig(), WebhookHost: "127.0.0.1", CertDir: filepath.Join(dir, "certs"),
		Components: []controllers.Component{op, &ImageCustomization{ISOURL: suite.ramdisk, Leave: leaveManual}}, Logger: testLogger(),
	})
	if err != nil {
		return fail(err)
	}
	defer host.Stop(context.Background())
	if suite.client, err = client.New(cp.RESTConfig(), client.Options{Scheme: host.Manager().GetScheme()}); err != nil {
		return fail(err)
	}
	return m.Run()
}

func fail(err error) int {
	fmt.Fprintln(os.Stderr, "metal3 test suite:", err)
	return 1
}

func testLogger() logr.Logger {
	if os.Getenv("METAL3_TEST_LOG") == "" {
		return logr.Discard()
	}
	return funcr.New(func(prefix, args string) { fmt.Fprintln(os.Stderr, prefix, args) }, funcr.Options{Verbosity: 1})
}

// bmc is one test's Redfish emulator (memory backend) and namespace.
type bmc struct {
	t       *testing.T
	ns      string
	backend *memory.Backend
	counts  *countingBackend
	server  *redfish.Server
	user    string
	pass    string
}

const (
	bmcUser = "admin"
	bmcPass = "s3cret-bmc"
)

// newBMC serves systems named after hosts, each with 4 CPUs, 8 GiB and
// two NICs, in a namespace of the test's own.
func newBMC(t *testing.T, hosts ...string) *bmc {
	t.Helper()
	return startBMC(t, redfish.Options{}, hosts...)
}

// startBMC is newBMC with server options (TLS).
func startBMC(t *testing.T, opts redfish.Options, hosts ...string) *bmc {
	t.Helper()
	ns := testNamespace(t)
	specs := make([]memory.SystemSpec, len(hosts))
	for i, h := range hosts {
		specs[i] = memory.SystemSpec{Name: h, UUID: memory.NameUUID(ns + "/" + h), CPUs: 4, MemoryGiB: 8,
			MACs: []string{fmt.Sprintf("52:54:00:aa:%02x:01", i), fmt.Sprintf("52:54:00:aa:%02x:02", i)}}
	}
	backend, err := memory.New(memory.Options{Systems: specs})
	if err != nil {
		t.Fatal(err)
	}
	b := &bmc{t: t, ns: ns, backend: backend, counts: &countingBackend{Backend: backend}, user: bmcUser, pass: bmcPass}
	opts.Backend = b.counts
	opts.HtpasswdPath = redfishtest.WriteHtpasswd(t, map[string]string{bmcUser: bmcPass})
	if b.server, err = redfish.New(opts); err != nil {
		t.Fatal(err)
	}
	if err := b.server.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b.server.Shutdown(context.Background()) })
	return b
}

// testNamespace creates a namespace for the test; at its end the test's
// hosts are deleted and their finalizers dropped, so the controller stops
// calling a BMC that is gone.
func testNamespace(t *testing.T) string {
	t.Helper()
	name := strings.ToLower(strings.NewReplacer("/", "-", "_", "-").Replace(t.Name()))
	if len(name) > 50 {
		name = name[:50]
	}
	name = strings.Trim(name, "-") + fmt.Sprintf("-%d", time.Now().UnixNano()%100000)
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if err := suite.client.Create(context.Background(), ns); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { dropHosts(t, name) })
	return name
}

func dropHosts(t *testing.T, ns string) {
	ctx := context.Background()
	list := &bmov1alpha1.BareMetalHostList{}
	if err := suite.client.List(ctx, list, client.InNamespace(ns)); err != nil {
		t.Errorf("list hosts to drop: %v", err)
		return
	}
	for i := range list.Items {
		h := &list.Items[i]
		_ = suite.client.Delete(ctx, h)
		_ = suite.client.Patch(ctx, h, client.RawPatch("application/merge-patch+json", []byte(`{"metadata":{"finalizers":null}}`)))
	}
}

func (b *bmc) systemID(host string) string { return memory.NameUUID(b.ns + "/" + host) }

func (b *bmc) address(host string) string {
	return "redfish-virtualmedia+" + b.server.URL() + "/redfish/v1/Systems/" + b.systemID(host)
}

// createSecret writes a BMC credentials Secret.
func (b *bmc) createSecret(name, user, pass string) *corev1.Secret {
	b.t.Helper()
	s := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: b.ns},
		Data:       map[string][]byte{"username": []byte(user), "password": []byte(pass)},
	}
	if err := suite.client.Create(context.Background(), s); err != nil {
		b.t.Fatal(err)
	}
	return s
}

// createHost writes a host's BMC Secret (good credentials) and its
// BareMetalHost, powered off and unprovisioned; mutate adjusts it first.
func (b *bmc) createHost(name string, mutate func(*bmov1alpha1.BareMetalHost)) client.ObjectKey {
	b.t.Helper()
	b.createSecret(name+"-bmc", b.user, b.pass)
	return b.createHostOnly(name, mutate)
}

func (b *bmc) createHostOnly(name string, mutate func(*bmov1alpha1.BareMetalHost)) client.ObjectKey {
	b.t.Helper()
	h := &bmov1alpha1.BareMetalHost{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: b.ns},
		Spec: bmov1alpha1.BareMetalHostSpec{
			BMC:            bmov1alpha1.BMCDetails{Address: b.address(name), CredentialsName: name + "-bmc"},
			BootMACAddress: b.mac(name),
		},
	}
	if mutate != nil {
		mutate(h)
	}
	if err := suite.client.Create(context.Background(), h); err != nil {
		b.t.Fatal(err)
	}
	return client.ObjectKeyFromObject(h)
}

func (b *bmc) mac(host string) string {
	s, err := b.backend.System(context.Background(), b.systemID(host))
	if err != nil || len(s.NICs) == 0 {
		return ""
	}
	return s.NICs[0].MAC
}

// system is the emulator's view of a host.
func (b *bmc) system(host string) *redfish.System {
	b.t.Helper()
	s, err := b.backend.System(context.Background(), b.systemID(host))
	if err != nil {
		b.t.Fatal(err)
	}
	return s
}

func (b *bmc) boots(host string) []string {
	b.t.Helper()
	h, err := b.backend.BootHistory(b.systemID(host))
	if err != nil {
		b.t.Fatal(err)
	}
	return h
}

// waitHost polls the host until cond holds, and fails the test with the
// host's status after timeout.
func waitHost(t *testing.T, key client.ObjectKey, what string, cond func(*bmov1alpha1.BareMetalHost) bool) *bmov1alpha1.BareMetalHost {
	t.Helper()
	h := &bmov1alpha1.BareMetalHost{}
	var lastErr error
	err := wait.PollUntilContextTimeout(context.Background(), 100*time.Millisecond, 90*time.Second, true, func(ctx context.Context) (bool, error) {
		lastErr = suite.client.Get(ctx, key, h)
		return lastErr == nil && cond(h), nil
	})
	if err != nil {
		raw, _ := json.MarshalIndent(h.Status, "", "  ")
		t.Fatalf("%s: timed out waiting for %s (last error %v); annotations %v, status:\n%s", key, what, lastErr, h.Annotations, raw)
	}
	return h
}

// waitGone polls until the host no longer exists.
func waitGone(t *testing.T, key client.ObjectKey) {
	t.Helper()
	err := wait.PollUntilContextTimeout(context.Background(), 100*time.Millisecond, 90*time.Second, true, func(ctx context.Context) (bool, error) {
		return apierrors.IsNotFound(suite.client.Get(ctx, key, &bmov1alpha1.BareMetalHost{})), nil
	})
	if err != nil {
		h := &bmov1alpha1.BareMetalHost{}
		_ = suite.client.Get(context.Background(), key, h)
		raw, _ := json.MarshalIndent(h.Status, "", "  ")
		t.Fatalf("%s: still there after deletion; finalizers %v, status:\n%s", key, h.Finalizers, raw)
	}
}

// waitFor polls cond.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	err := wait.PollUntilContextTimeout(context.Background(), 100*time.Millisecond, 90*time.Second, true, func(context.Context) (bool, error) {
		return cond(), nil
	})
	if err != nil {
		t.Fatalf("timed out waiting for %s", what)
	}
}

// update applies change to the latest host, retrying on conflicts.
func update(t *testing.T, key client.ObjectKey, change func(*bmov1alpha1.BareMetalHost)) {
	t.Helper()
	for range 10 {
		h := &bmov1alpha1.BareMetalHost{}
		if err := suite.client.Get(context.Background(), key, h); err != nil {
			t.Fatal(err)
		}
		change(h)
		err := suite.client.Update(context.Background(), h)
		if err == nil {
			return
		}
		if !apierrors.IsConflict(err) {
			t.Fatal(err)
		}
	}
	t.Fatalf("update %s: conflicts", key)
}

func inState(state bmov1alpha1.ProvisioningState) func(*bmov1alpha1.BareMetalHost) bool {
	return func(h *bmov1alpha1.BareMetalHost) bool {
		return h.Status.Provisioning.State == state && h.Status.OperationalStatus == bmov1alpha1.OperationalStatusOK
	}
}

// countingBackend counts the actions a BMC performs.
type countingBackend struct {
	redfish.Backend
	resets, inserts, ejects atomic.Int64
}

func (c *countingBackend) Reset(ctx context.Context, id string, action redfish.ResetType) error {
	c.resets.Add(1)
	return c.Backend.Reset(ctx, id, action)
}

func (c *countingBackend) InsertMedia(ctx context.Context, id, device string, image redfish.Image) error {
	c.inserts.Add(1)
	return c.Backend.InsertMedia(ctx, id, device, image)
}

func (c *countingBackend) EjectMedia(ctx context.Context, id, device string) error {
	c.ejects.Add(1)
	return c.Backend.EjectMedia(ctx, id, device)
}

// fakeDeployer records what the controller asks of a deploy agent; its
// hooks, by system ID, run during a call and may make it fail.
type fakeDeployer struct {
	mu     sync.Mutex
	writes map[string][]Image
	wipes  map[string]int
	hooks  map[string]func(Host) error
}

var _ Deployer = (*fakeDeployer)(nil)

func newFakeDeployer() *fakeDeployer {
	return &fakeDeployer{writes: map[string][]Image{}, wipes: map[string]int{}, hooks: map[string]func(Host) error{}}
}

func (f *fakeDeployer) WriteImage(_ context.Context, host Host, image Image) error {
	f.mu.Lock()
	hook := f.hooks[host.SystemID]
	f.mu.Unlock()
	if hook != nil {
		if err := hook(host); err != nil {
			return err
		}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.writes[host.SystemID] = append(f.writes[host.SystemID], image)
	return nil
}

func (f *fakeDeployer) WipeDisk(_ context.Context, host Host) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.wipes[host.SystemID]++
	return nil
}

func (f *fakeDeployer) setHook(systemID string, hook func(Host) error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.hooks[systemID] = hook
}

func (f *fakeDeployer) written(systemID string) []Image {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]Image(nil), f.writes[systemID]...)
}

func (f *fakeDeployer) wiped(systemID string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.wipes[systemID]
}
