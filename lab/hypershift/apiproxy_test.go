package hypershift

import (
	"context"
	"errors"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	clusterv1beta1 "sigs.k8s.io/cluster-api/api/core/v1beta1"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/paritylab/paritylab/lab/controlplane"
	"github.com/paritylab/paritylab/lab/crds"
	"github.com/paritylab/paritylab/lab/hypershift/apiproxy"
	capiagentv1 "github.com/paritylab/paritylab/providers/agent/api/v1beta1"
)

// An unmodified controller-runtime client pointed at the API proxy works
// on HyperShift's private types as if they were Cluster API's: it finds
// cluster.x-k8s.io by discovery, writes and reads there, and watches,
// while the hub stores the objects in cluster.hypershift.openshift.io. The
// platform's own cluster.x-k8s.io objects on the same hub stay out of its
// sight.
func TestAPIProxyServesPrivateTypesAsStandard(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	cp, err := controlplane.Start(ctx, controlplane.Options{Name: "apiproxy-test", Dir: filepath.Join(t.TempDir(), "hub")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cp.Stop() })
	platform := crds.ClusterAPI()
	platform.OnlyVersion = "v1beta2"
	if err := crds.Install(cp.RESTConfig(), crds.InstallInput{Sets: []crds.Set{platform, privateStoredVersionOnly()}}); err != nil {
		t.Fatal(err)
	}
	hub, err := client.New(cp.RESTConfig(), client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	proxied := proxiedClient(t, cp.RESTConfig())

	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "clusters-hc1"}}
	if err := hub.Create(ctx, ns); err != nil {
		t.Fatal(err)
	}
	platformCluster := &unstructured.Unstructured{}
	platformCluster.SetGroupVersionKind(schema.GroupVersionKind{Group: "cluster.x-k8s.io", Version: "v1beta2", Kind: "Cluster"})
	platformCluster.SetNamespace(ns.Name)
	platformCluster.SetName("platform")
	platformCluster.Object["spec"] = map[string]any{"paused": true}
	if err := hub.Create(ctx, platformCluster); err != nil {
		t.Fatal(err)
	}

	cluster := &clusterv1.Cluster{ObjectMeta: metav1.ObjectMeta{Namespace: ns.Name, Name: "hc1-abcde",
		Labels: map[string]string{clusterv1.ClusterNameLabel: "hc1-abcde"}},
		Spec: clusterv1.ClusterSpec{InfrastructureRef: clusterv1.ContractVersionedObjectReference{
			APIGroup: "infrastructure.cluster.x-k8s.io", Kind: "Metal3Cluster", Name: "hc1"}}}
	if err := proxied.Create(ctx, cluster); err != nil {
		t.Fatalf("create through the proxy: %v", err)
	}

	stored := &unstructured.Unstructured{}
	stored.SetGroupVersionKind(schema.GroupVersionKind{Group: "cluster.hypershift.openshift.io", Version: "v1beta2", Kind: "Cluster"})
	if err := hub.Get(ctx, client.ObjectKeyFromObject(cluster), stored); err != nil {
		t.Fatalf("the hub's private Cluster: %v", err)
	}
	if g, _, _ := unstructured.NestedString(stored.Object, "spec", "infrastructureRef", "apiGroup"); g != "infrastructure.cluster.hypershift.openshift.io" {
		t.Errorf("stored infrastructureRef.apiGroup %q, want the private group", g)
	}
	if stored.GetLabels()[clusterv1.ClusterNameLabel] != "hc1-abcde" {
		t.Errorf("stored labels %v: label keys must pass as they are", stored.GetLabels())
	}
	if err := hub.Get(ctx, client.ObjectKeyFromObject(cluster), platformCluster.DeepCopy()); !apierrors.IsNotFound(err) {
		t.Errorf("the Cluster landed in the platform's cluster.x-k8s.io too: %v", err)
	}

	got := &clusterv1.Cluster{}
	if err := proxied.Get(ctx, client.ObjectKeyFromObject(cluster), got); err != nil {
		t.Fatalf("read through the proxy: %v", err)
	}
	if got.Spec.InfrastructureRef.APIGroup != "infrastructure.cluster.x-k8s.io" {
		t.Errorf("read infrastructureRef.apiGroup %q through the proxy", got.Spec.InfrastructureRef.APIGroup)
	}
	list := &clusterv1.ClusterList{}
	if err := proxied.List(ctx, list, client.InNamespace(ns.Name)); err != nil {
		t.Fatal(err)
	}
	if len(list.Items) != 1 || list.Items[0].Name != cluster.Name {
		t.Errorf("the proxy lists %d Clusters, want only the private one", len(list.Items))
	}

	w, err := proxiedWatch(t, cp.RESTConfig()).Watch(ctx, &clusterv1.ClusterList{}, client.InNamespace(ns.Name))
	if err != nil {
		t.Fatalf("watch through the proxy: %v", err)
	}
	defer w.Stop()
	select {
	case ev := <-w.ResultChan():
		c, ok := ev.Object.(*clusterv1.Cluster)
		if ev.Type != watch.Added || !ok || c.Name != cluster.Name {
			t.Errorf("first watch event %s %T", ev.Type, ev.Object)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("no watch event through the proxy")
	}
}

// privateStoredVersionOnly is the private CRDs for a hub without the
// operator's conversion shim: the stored version only, as the platform's
// CRDs beside them in these tests.
func privateStoredVersionOnly() crds.Set {
	s := PrivateClusterAPI()
	s.OnlyVersion = "v1beta2"
	return s
}

// proxiedClient is a controller-runtime client of the hub through a proxy
// served on loopback for the test.
func proxiedClient(t *testing.T, hub *rest.Config) client.Client {
	t.Helper()
	c, err := client.New(proxyConfig(t, hub), client.Options{Scheme: proxyScheme(t)})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func proxiedWatch(t *testing.T, hub *rest.Config) client.WithWatch {
	t.Helper()
	c, err := client.NewWithWatch(proxyConfig(t, hub), client.Options{Scheme: proxyScheme(t)})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func proxyScheme(t *testing.T) *runtime.Scheme {
	t.Helper()
	s := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	if err := errors.Join(clusterv1.AddToScheme(s), clusterv1beta1.AddToScheme(s), capiagentv1.AddToScheme(s)); err != nil {
		t.Fatal(err)
	}
	return s
}

func proxyConfig(t *testing.T, hub *rest.Config) *rest.Config {
	t.Helper()
	u, err := url.Parse(hub.Host)
	if err != nil {
		t.Fatal(err)
	}
	transport, err := rest.TransportFor(hub)
	if err != nil {
		t.Fatal(err)
	}
	h, err := apiproxy.NewHandler(apiproxy.Options{Upstream: u, Transport: transport})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return &rest.Config{Host: srv.URL}
}
