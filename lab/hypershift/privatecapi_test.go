package hypershift

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/ptr"
	clusterv1beta1 "sigs.k8s.io/cluster-api/api/core/v1beta1"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/paritylab/paritylab/lab/agentproviders"
	"github.com/paritylab/paritylab/lab/controlplane"
	"github.com/paritylab/paritylab/lab/crds"
	"github.com/paritylab/paritylab/lab/hypershift/apiproxy"
	capiagentv1 "github.com/paritylab/paritylab/providers/agent/api/v1beta1"
)

const privateGroup = "cluster.hypershift.openshift.io"

// Cluster API's own MachineSet and Machine controllers, unmodified, work
// on a hosted cluster's private types through the API proxy: they make
// the Machine and the AgentMachine from its template, the hub stores the
// AgentMachine owned by the private Machine, and the hub's garbage
// collector (kube-controller-manager's, which envtest lacks) leaves it
// alone, where it collects an AgentMachine whose owner reference names
// the standard group (the enhancement's risk: a live node unbound). The
// CAPI of one control-plane namespace never touches another's objects.
func TestPrivateCAPIMakesMachinesThroughTheProxy(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	cp, err := controlplane.Start(ctx, controlplane.Options{Name: "private-capi-test",
		Dir: filepath.Join(t.TempDir(), "hub"), ControllerManager: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cp.Stop() })
	platform := crds.ClusterAPI()
	platform.OnlyVersion = "v1beta2"
	if err := crds.Install(cp.RESTConfig(), crds.InstallInput{
		Sets: []crds.Set{platform, privateStoredVersionOnly(), agentproviders.AgentCRDs()}}); err != nil {
		t.Fatal(err)
	}
	hub, err := client.New(cp.RESTConfig(), client.Options{Scheme: proxyScheme(t)})
	if err != nil {
		t.Fatal(err)
	}
	for _, ns := range []string{"clusters-hc1", "clusters-hc2"} {
		if err := hub.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
			t.Fatal(err)
		}
	}
	p, err := StartPrivateCAPI(ctx, PrivateCAPIOptions{Hub: cp.RESTConfig(), Namespace: "clusters-hc1"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := p.Stop(); err != nil {
			t.Errorf("stop the private CAPI: %v", err)
		}
	})
	proxied, err := client.New(p.ProxyConfig(), client.Options{Scheme: proxyScheme(t)})
	if err != nil {
		t.Fatal(err)
	}
	for _, ns := range []string{"clusters-hc1", "clusters-hc2"} {
		createMachineSetObjects(t, proxied, ns)
	}

	machine := &clusterv1.Machine{}
	waitForTest(t, "a Machine and its AgentMachine made through the proxy", func() bool {
		ms := &clusterv1.MachineList{}
		if err := proxied.List(ctx, ms, client.InNamespace("clusters-hc1")); err != nil || len(ms.Items) != 1 {
			return false
		}
		*machine = ms.Items[0]
		return machine.Spec.InfrastructureRef.Name != "" && agentMachineOwnedBy(ctx, hub, machine) == nil
	})
	if err := agentMachineOwnedBy(ctx, hub, machine); err != nil {
		t.Fatal(err)
	}
	stored := &unstructured.Unstructured{}
	stored.SetGroupVersionKind(schema.GroupVersionKind{Group: privateGroup, Version: "v1beta2", Kind: "Machine"})
	if err := hub.Get(ctx, client.ObjectKeyFromObject(machine), stored); err != nil {
		t.Fatalf("the hub's private Machine: %v", err)
	}
	if err := hub.Get(ctx, client.ObjectKeyFromObject(machine), &clusterv1.Machine{}); !apierrors.IsNotFound(err) {
		t.Errorf("the Machine is in the platform's cluster.x-k8s.io too: %v", err)
	}

	collected := standardOwnedAgentMachine(t, hub, machine)
	waitForTest(t, "the garbage collector to delete the AgentMachine owned by a standard-group Machine", func() bool {
		return apierrors.IsNotFound(hub.Get(ctx, client.ObjectKeyFromObject(collected), &capiagentv1.AgentMachine{}))
	})
	if err := agentMachineOwnedBy(ctx, hub, machine); err != nil {
		t.Errorf("after the garbage collector's pass: %v", err)
	}
	other := &clusterv1.MachineList{}
	if err := proxied.List(ctx, other, client.InNamespace("clusters-hc2")); err != nil || len(other.Items) != 0 {
		t.Errorf("the private CAPI of clusters-hc1 made %d Machines in clusters-hc2 (%v)", len(other.Items), err)
	}
}

// createMachineSetObjects writes, through the proxy, a Cluster, an
// AgentMachineTemplate and a MachineSet of one replica, as HyperShift's
// NodePool controller shapes them.
func createMachineSetObjects(t *testing.T, c client.Client, ns string) {
	t.Helper()
	labels := map[string]string{clusterv1.ClusterNameLabel: "hc-abcde"}
	pool := map[string]string{clusterv1.ClusterNameLabel: "hc-abcde", "hypershift.openshift.io/nodePool": "np1"}
	for _, obj := range []client.Object{
		&clusterv1.Cluster{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "hc-abcde", Labels: labels},
			Spec: clusterv1.ClusterSpec{InfrastructureRef: clusterv1.ContractVersionedObjectReference{
				APIGroup: capiagentv1.GroupVersion.Group, Kind: "AgentCluster", Name: "hc"}}},
		&capiagentv1.AgentMachineTemplate{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "np1-a1b2c3d4"}},
		&clusterv1.MachineSet{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "np1", Labels: labels},
			Spec: clusterv1.MachineSetSpec{
				ClusterName: "hc-abcde", Replicas: ptr.To[int32](1),
				Selector: metav1.LabelSelector{MatchLabels: pool},
				Template: clusterv1.MachineTemplateSpec{ObjectMeta: clusterv1.ObjectMeta{Labels: pool},
					Spec: clusterv1.MachineSpec{ClusterName: "hc-abcde",
						Bootstrap: clusterv1.Bootstrap{DataSecretName: ptr.To("user-data-np1")},
						InfrastructureRef: clusterv1.ContractVersionedObjectReference{
							APIGroup: capiagentv1.GroupVersion.Group, Kind: "AgentMachineTemplate", Name: "np1-a1b2c3d4"}}}}},
	} {
		if err := c.Create(context.Background(), obj); err != nil {
			t.Fatalf("create %T %s/%s through the proxy: %v", obj, ns, obj.GetName(), err)
		}
	}
}

// agentMachineOwnedBy checks, on the hub, that the Machine's AgentMachine
// is stored with its controller owner reference in the private group.
func agentMachineOwnedBy(ctx context.Context, hub client.Client, m *clusterv1.Machine) error {
	am := &capiagentv1.AgentMachine{}
	if err := hub.Get(ctx, client.ObjectKey{Namespace: m.Namespace, Name: m.Spec.InfrastructureRef.Name}, am); err != nil {
		return err
	}
	for _, ref := range am.OwnerReferences {
		if ref.Kind == "Machine" && ptr.Deref(ref.Controller, false) {
			if ref.APIVersion != privateGroup+"/v1beta2" || ref.UID != m.UID {
				return &ownerError{am.Name, ref}
			}
			return nil
		}
	}
	return &ownerError{name: am.Name}
}

type ownerError struct {
	name string
	ref  metav1.OwnerReference
}

func (e *ownerError) Error() string {
	return "AgentMachine " + e.name + " stored with Machine owner " + e.ref.APIVersion + " " + string(e.ref.UID) +
		", want " + privateGroup + "/v1beta2 and the Machine's UID"
}

// standardOwnedAgentMachine is an AgentMachine whose owner reference
// names the Machine by its UID in cluster.x-k8s.io, where it does not
// exist: what a write that skipped the proxy would store.
func standardOwnedAgentMachine(t *testing.T, hub client.Client, m *clusterv1.Machine) *capiagentv1.AgentMachine {
	t.Helper()
	am := &capiagentv1.AgentMachine{ObjectMeta: metav1.ObjectMeta{Namespace: m.Namespace, Name: "skipped-the-proxy",
		OwnerReferences: []metav1.OwnerReference{{APIVersion: clusterv1.GroupVersion.String(), Kind: "Machine",
			Name: m.Name, UID: m.UID}}}}
	if err := hub.Create(context.Background(), am); err != nil {
		t.Fatal(err)
	}
	return am
}

func waitForTest(t *testing.T, what string, cond func() bool) {
	t.Helper()
	err := wait.PollUntilContextTimeout(context.Background(), 200*time.Millisecond, 90*time.Second, true,
		func(context.Context) (bool, error) { return cond(), nil })
	if err != nil {
		t.Fatalf("timed out waiting for %s", what)
	}
}

// A v1beta1 MachineDeployment, as HyperShift's NodePool controller writes
// it, goes through the proxy into the private group, is stored at v1beta2
// by way of the operator's conversion shim in front of Cluster API's
// conversion webhook, and reads back at both versions with its fields.
func TestPrivateTypesConvertThroughTheShim(t *testing.T) {
	t.Parallel()
	h := startHub(t)
	ctx := context.Background()
	h.create(t, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "clusters-conv"}})
	proxy, err := apiproxy.Serve(h.config, logr.Discard())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = proxy.Stop() })
	proxied, err := client.New(proxy.RESTConfig(), client.Options{Scheme: proxyScheme(t)})
	if err != nil {
		t.Fatal(err)
	}
	infraRef := corev1.ObjectReference{APIVersion: capiagentv1.GroupVersion.String(), Kind: "AgentMachineTemplate", Name: "np1-a1b2c3d4"}
	md := &clusterv1beta1.MachineDeployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: "clusters-conv", Name: "np1"},
		Spec: clusterv1beta1.MachineDeploymentSpec{
			ClusterName: "hc-abcde", Replicas: ptr.To[int32](2),
			Selector: metav1.LabelSelector{MatchLabels: map[string]string{"pool": "np1"}},
			Template: clusterv1beta1.MachineTemplateSpec{ObjectMeta: clusterv1beta1.ObjectMeta{Labels: map[string]string{"pool": "np1"}},
				Spec: clusterv1beta1.MachineSpec{ClusterName: "hc-abcde", Version: ptr.To("4.21.0"),
					Bootstrap:         clusterv1beta1.Bootstrap{DataSecretName: ptr.To("user-data-np1")},
					InfrastructureRef: infraRef}},
			Strategy: &clusterv1beta1.MachineDeploymentStrategy{Type: clusterv1beta1.RollingUpdateMachineDeploymentStrategyType,
				RollingUpdate: &clusterv1beta1.MachineRollingUpdateDeployment{MaxSurge: ptr.To(intstr.FromInt32(0)), MaxUnavailable: ptr.To(intstr.FromInt32(1))}},
		},
	}
	if err := proxied.Create(ctx, md); err != nil {
		t.Fatalf("create a v1beta1 MachineDeployment through the proxy: %v", err)
	}

	stored := &unstructured.Unstructured{}
	stored.SetGroupVersionKind(schema.GroupVersionKind{Group: privateGroup, Version: "v1beta2", Kind: "MachineDeployment"})
	h.get(t, client.ObjectKeyFromObject(md), stored)
	if g, _, _ := unstructured.NestedString(stored.Object, "spec", "template", "spec", "infrastructureRef", "apiGroup"); g != capiagentv1.GroupVersion.Group {
		t.Errorf("stored infrastructureRef.apiGroup %q: the v1beta1 apiVersion was not converted", g)
	}
	v1beta2 := &clusterv1.MachineDeployment{}
	if err := proxied.Get(ctx, client.ObjectKeyFromObject(md), v1beta2); err != nil {
		t.Fatalf("read at v1beta2 through the proxy: %v", err)
	}
	if v1beta2.Spec.Template.Spec.InfrastructureRef.Kind != infraRef.Kind || ptr.Deref(v1beta2.Spec.Replicas, 0) != 2 ||
		v1beta2.Spec.Rollout.Strategy.RollingUpdate.MaxSurge.IntValue() != 0 {
		t.Errorf("v1beta2 read %+v", v1beta2.Spec)
	}
	v1beta1 := &clusterv1beta1.MachineDeployment{}
	if err := proxied.Get(ctx, client.ObjectKeyFromObject(md), v1beta1); err != nil {
		t.Fatalf("read at v1beta1 through the proxy: %v", err)
	}
	// v1beta2 references have no namespace; CAPI's conversion fills the
	// object's.
	got := v1beta1.Spec.Template.Spec.InfrastructureRef
	if got.APIVersion != infraRef.APIVersion || got.Kind != infraRef.Kind || got.Name != infraRef.Name || ptr.Deref(v1beta1.Spec.Template.Spec.Version, "") != "4.21.0" ||
		ptr.Deref(v1beta1.Spec.Template.Spec.Bootstrap.DataSecretName, "") != "user-data-np1" {
		t.Errorf("v1beta1 read back %+v, want what was written", v1beta1.Spec.Template.Spec)
	}
}
