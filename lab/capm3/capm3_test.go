package capm3

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	bmov1alpha1 "github.com/metal3-io/baremetal-operator/apis/metal3.io/v1alpha1"
	capm3v1beta1 "github.com/metal3-io/cluster-api-provider-metal3/api/v1beta1"
	capm3v1beta2 "github.com/metal3-io/cluster-api-provider-metal3/api/v1beta2"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	"github.com/paritylab/paritylab/lab/controllers"
	"github.com/paritylab/paritylab/lab/controlplane"
	"github.com/paritylab/paritylab/lab/crds"
	"github.com/paritylab/paritylab/lab/state"
)

// hub is a real API server with the Cluster API and bare-metal operator
// CRDs that CAPM3's manager watches, and CAPM3 itself started on it.
type hub struct {
	client  client.Client
	manager *Manager
	tracker *recordingTracker
	dir     string
}

func startHub(t *testing.T) *hub {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	dir := t.TempDir()
	cp, err := controlplane.Start(ctx, controlplane.Options{Name: "capm3-test", Dir: filepath.Join(dir, "cp")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cp.Stop() })
	apis, err := controllers.Start(ctx, controllers.Options{
		RESTConfig: cp.RESTConfig(), WebhookHost: "127.0.0.1", CertDir: filepath.Join(dir, "certs"),
		Components: []controllers.Component{&controllers.CRDsOnly{
			ComponentName: "capi-and-metal3-apis",
			Sets:          []crds.Set{crds.ClusterAPI(), crds.Metal3()},
			Schemes:       []func(*runtime.Scheme) error{clusterv1.AddToScheme, bmov1alpha1.AddToScheme},
		}},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = apis.Stop(context.Background()) })
	h := &hub{tracker: &recordingTracker{}, dir: filepath.Join(dir, "capm3")}
	h.manager, err = Start(ctx, Options{
		RESTConfig: cp.RESTConfig(), Kubeconfig: cp.Kubeconfig(),
		Dir: h.dir, LogDir: filepath.Join(dir, "logs"), Tracker: h.tracker,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = h.manager.Stop() })
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{AddToScheme, clusterv1.AddToScheme} {
		if err := add(scheme); err != nil {
			t.Fatal(err)
		}
	}
	if h.client, err = client.New(cp.RESTConfig(), client.Options{Scheme: scheme}); err != nil {
		t.Fatal(err)
	}
	return h
}

// One manager serves every check: starting it costs seconds.
func TestUpstreamManager(t *testing.T) {
	h := startHub(t)
	t.Run("its validating webhook refuses a Metal3Cluster without a control-plane host", func(t *testing.T) {
		bad := &capm3v1beta2.Metal3Cluster{ObjectMeta: metav1.ObjectMeta{Name: "no-host", Namespace: "default"}}
		err := h.client.Create(context.Background(), bad)
		if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "spec.controlPlaneEndpoint") {
			t.Fatalf("create without host: %v, want CAPM3's Invalid spec.controlPlaneEndpoint", err)
		}
	})
	t.Run("a v1beta1 object converts through the manager and is defaulted", func(t *testing.T) {
		ctx := context.Background()
		old := &capm3v1beta1.Metal3Cluster{ObjectMeta: metav1.ObjectMeta{Name: "old", Namespace: "default"},
			Spec: capm3v1beta1.Metal3ClusterSpec{ControlPlaneEndpoint: capm3v1beta1.APIEndpoint{Host: "api.old.example"}, NoCloudProvider: ptr.To(true)}}
		if err := h.client.Create(ctx, old); err != nil {
			t.Fatal(err)
		}
		got := &capm3v1beta2.Metal3Cluster{}
		if err := h.client.Get(ctx, client.ObjectKeyFromObject(old), got); err != nil {
			t.Fatal(err)
		}
		if got.Spec.ControlPlaneEndpoint.Port != 6443 || got.Spec.CloudProviderEnabled == nil || *got.Spec.CloudProviderEnabled {
			t.Fatalf("v1beta2 view %+v: want port 6443 and cloudProviderEnabled=false (noCloudProvider inverted)", got.Spec)
		}
	})
	t.Run("its Metal3Cluster controller provisions a cluster's infrastructure", func(t *testing.T) {
		ctx := context.Background()
		cluster := &clusterv1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "site", Namespace: "default"},
			Spec: clusterv1.ClusterSpec{InfrastructureRef: clusterv1.ContractVersionedObjectReference{
				APIGroup: capm3v1beta2.GroupVersion.Group, Kind: "Metal3Cluster", Name: "site"}}}
		if err := h.client.Create(ctx, cluster); err != nil {
			t.Fatal(err)
		}
		m3c := &capm3v1beta2.Metal3Cluster{ObjectMeta: metav1.ObjectMeta{Name: "site", Namespace: "default",
			Labels:          map[string]string{clusterv1.ClusterNameLabel: "site"},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: clusterv1.GroupVersion.String(), Kind: "Cluster", Name: "site", UID: cluster.UID}}},
			Spec: capm3v1beta2.Metal3ClusterSpec{ControlPlaneEndpoint: capm3v1beta2.APIEndpoint{Host: "api.site.example"}}}
		if err := h.client.Create(ctx, m3c); err != nil {
			t.Fatal(err)
		}
		err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
			if err := h.client.Get(ctx, client.ObjectKeyFromObject(m3c), m3c); err != nil {
				return false, err
			}
			return ptr.Deref(m3c.Status.Initialization.Provisioned, false), nil
		})
		if err != nil {
			t.Fatalf("Metal3Cluster never provisioned: %v; status %+v", err, m3c.Status)
		}
	})
	t.Run("stop ends the process, removes its files and forgets them", func(t *testing.T) {
		id := h.manager.Identity()
		if id == nil || !id.Alive() {
			t.Fatal("manager not running before stop")
		}
		if !h.tracker.has(state.ProcessResource(*id)) || !h.tracker.has(state.DirResource(h.dir)) {
			t.Fatalf("tracker %v does not hold the process and %s", h.tracker.live, h.dir)
		}
		if err := h.manager.Stop(); err != nil {
			t.Fatal(err)
		}
		if id.Alive() {
			t.Error("manager still running after stop")
		}
		if _, err := os.Stat(h.dir); !os.IsNotExist(err) {
			t.Errorf("%s left behind: %v", h.dir, err)
		}
		if len(h.tracker.live) != 0 {
			t.Errorf("tracker still holds %v", h.tracker.live)
		}
	})
}

// recordingTracker keeps what is tracked and not yet forgotten.
type recordingTracker struct {
	mu   sync.Mutex
	live []state.Resource
}

func (r *recordingTracker) Track(res state.Resource) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.live = append(r.live, res)
	return nil
}

func (r *recordingTracker) Forget(res state.Resource) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	for i, l := range r.live {
		if l.Kind == res.Kind && l.ID == res.ID {
			r.live = append(r.live[:i], r.live[i+1:]...)
			return nil
		}
	}
	return nil
}

func (r *recordingTracker) has(res state.Resource) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, l := range r.live {
		if l.Kind == res.Kind && l.ID == res.ID {
			return true
		}
	}
	return false
}
