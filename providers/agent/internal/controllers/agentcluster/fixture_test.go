package agentcluster_test

import (
	"context"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	hivev1 "github.com/openshift/hive/apis/hive/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	capiagentv1 "github.com/paritylab/paritylab/providers/agent/api/v1beta1"
	"github.com/paritylab/paritylab/providers/agent/internal/controllers/agentcluster"
	hiveextv1 "github.com/paritylab/paritylab/providers/thirdparty/hiveextensions/v1beta1"
)

const (
	timeout = 30 * time.Second
	// quiet is how long Consistently watches for what must not happen.
	quiet = 3 * time.Second
	// dependencyWait is the controller's poll while it waits for what it
	// cannot watch (upstream agentcluster_controller.go L46).
	dependencyWait = 5 * time.Second

	baseDomain = "hosted.example.com"
	// The control plane's Secrets, named as HyperShift names them in a
	// control plane namespace.
	pullSecret        = "pull-secret"
	kubeconfig        = "admin-kubeconfig"
	kubeadminPassword = "kubeadmin-password"
	ignitionCA        = "ignition-server-ca-cert"
)

var (
	hcpGVK     = schema.GroupVersionKind{Group: hcpGroup, Version: hcpVersion, Kind: hcpKind}
	v1beta2GVK = schema.GroupVersionKind{Group: v1beta2Group, Version: v1beta2Version, Kind: v1beta2Kind}
)

// fixture is one test's world, as HyperShift and Cluster API leave it in a
// control plane namespace: the control plane's Secrets, the
// HostedControlPlane "hcp" with every field the provider reads, and the
// Cluster "c" whose control plane it is and whose infrastructure is the
// AgentCluster of the test (agentCluster()).
type fixture struct {
	t  *testing.T
	g  *WithT
	ns string
	// name is the AgentCluster's: the namespace's, because the
	// agentClusterRef label on ClusterDeployments holds a name only and
	// the provider looks for it in every namespace.
	name    string
	cluster *clusterv1.Cluster
}

func newFixture(t *testing.T) *fixture {
	t.Parallel()
	ns := env.Namespace(t)
	f := &fixture{t: t, g: NewWithT(t), ns: ns, name: ns}
	for _, name := range []string{pullSecret, kubeconfig, kubeadminPassword, ignitionCA} {
		env.Create(t, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}, Data: map[string][]byte{"k": []byte("v")}})
	}
	f.controlPlane(hcpGVK, "hcp", controlPlaneStatus(true))
	f.cluster = f.newCluster(hcpGVK, "hcp")
	return f
}

// newCluster creates the Cluster "c" with the named control plane (no
// control plane reference when name is empty).
func (f *fixture) newCluster(cp schema.GroupVersionKind, name string) *clusterv1.Cluster {
	f.t.Helper()
	c := &clusterv1.Cluster{
		ObjectMeta: metav1.ObjectMeta{Name: "c", Namespace: f.ns},
		Spec: clusterv1.ClusterSpec{InfrastructureRef: clusterv1.ContractVersionedObjectReference{
			APIGroup: capiagentv1.GroupVersion.Group, Kind: "AgentCluster", Name: f.name,
		}},
	}
	if name != "" {
		c.Spec.ControlPlaneRef = clusterv1.ContractVersionedObjectReference{APIGroup: cp.Group, Kind: cp.Kind, Name: name}
	}
	env.Create(f.t, c)
	return c
}

// controlPlane creates a control plane object of kind gvk whose spec has
// the base domain and pull secret, and then writes status as its
// controller would (nil: none yet).
func (f *fixture) controlPlane(gvk schema.GroupVersionKind, name string, status map[string]any) *unstructured.Unstructured {
	f.t.Helper()
	u := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{
		"dns":        map[string]any{"baseDomain": baseDomain},
		"pullSecret": map[string]any{"name": pullSecret},
		"platform":   map[string]any{"type": "Agent"},
	}}}
	u.SetGroupVersionKind(gvk)
	u.SetNamespace(f.ns)
	u.SetName(name)
	env.Create(f.t, u)
	if status != nil {
		f.setControlPlaneStatus(u, status)
	}
	return u
}

func (f *fixture) setControlPlaneStatus(u *unstructured.Unstructured, status map[string]any) {
	f.t.Helper()
	f.g.Expect(env.Update(client.ObjectKeyFromObject(u), u, func() { u.Object["status"] = status }, true)).To(Succeed())
}

// controlPlaneStatus is a HostedControlPlane's status naming its admin
// kubeconfig and, if password, its kubeadmin password.
func controlPlaneStatus(password bool) map[string]any {
	s := map[string]any{
		"ready":      true,
		"kubeConfig": map[string]any{"name": kubeconfig, "key": "kubeconfig"},
	}
	if password {
		s["kubeadminPassword"] = map[string]any{"name": kubeadminPassword}
	}
	return s
}

// agentCluster creates the AgentCluster of the Cluster "c" as Cluster API
// leaves it (owned by the Cluster) with spec, labelled for this test's
// controller; changes apply before it is created.
func (f *fixture) agentCluster(spec capiagentv1.AgentClusterSpec, changes ...func(*capiagentv1.AgentCluster)) *capiagentv1.AgentCluster {
	f.t.Helper()
	ac := &capiagentv1.AgentCluster{
		ObjectMeta: metav1.ObjectMeta{
			Name: f.name, Namespace: f.ns,
			Labels: map[string]string{clusterv1.ClusterNameLabel: "c", clusterv1.WatchLabel: f.ns},
			OwnerReferences: []metav1.OwnerReference{{
				APIVersion: clusterv1.GroupVersion.String(), Kind: "Cluster", Name: "c", UID: f.cluster.UID,
			}},
		},
		Spec: spec,
	}
	for _, change := range changes {
		change(ac)
	}
	env.Create(f.t, ac)
	return ac
}

// unwatched leaves the AgentCluster to direct calls (reconcile()): no
// test's controller sees it.
func unwatched(ac *capiagentv1.AgentCluster) { delete(ac.Labels, clusterv1.WatchLabel) }

// withEndpoint is a spec whose control plane endpoint is set, as HyperShift
// sets it.
func withEndpoint(ep *capiagentv1.IgnitionEndpoint) capiagentv1.AgentClusterSpec {
	return capiagentv1.AgentClusterSpec{
		IgnitionEndpoint:     ep,
		ControlPlaneEndpoint: clusterv1.APIEndpoint{Host: "api.hosted.example.com", Port: 6443},
	}
}

// startController adds an AgentCluster controller to the running manager,
// reconciling only this test's AgentClusters.
func (f *fixture) startController() {
	f.t.Helper()
	r := &agentcluster.Reconciler{Client: env.Manager.GetClient(), WatchFilterValue: f.ns}
	f.g.Expect(r.SetupWithManager(context.Background(), env.Manager, controller.Options{})).To(Succeed())
}

// reconcile runs one Reconcile of the AgentCluster, outside any
// controller, with an uncached client.
func (f *fixture) reconcile() (ctrl.Result, error) {
	r := &agentcluster.Reconciler{Client: env.Client}
	return r.Reconcile(context.Background(), ctrl.Request{NamespacedName: client.ObjectKey{Namespace: f.ns, Name: f.name}})
}

func (f *fixture) get(obj client.Object) {
	f.t.Helper()
	f.g.Expect(env.Client.Get(context.Background(), client.ObjectKeyFromObject(obj), obj)).To(Succeed())
}

func (f *fixture) getAgentCluster() *capiagentv1.AgentCluster {
	f.t.Helper()
	ac := &capiagentv1.AgentCluster{ObjectMeta: metav1.ObjectMeta{Namespace: f.ns, Name: f.name}}
	f.get(ac)
	return ac
}

// eventuallyReady waits for status.ready and returns the AgentCluster.
func (f *fixture) eventuallyReady() *capiagentv1.AgentCluster {
	f.t.Helper()
	var ac *capiagentv1.AgentCluster
	f.g.Eventually(func() bool {
		ac = f.getAgentCluster()
		return ac.Status.Ready
	}, timeout).Should(BeTrue(), "AgentCluster %s should become ready", f.name)
	return ac
}

// eventuallyClusterDeployment waits for the AgentCluster's status to name
// a ClusterDeployment and returns it.
func (f *fixture) eventuallyClusterDeployment() *hivev1.ClusterDeployment {
	f.t.Helper()
	var ref capiagentv1.ClusterDeploymentReference
	f.g.Eventually(func() string {
		ref = f.getAgentCluster().Status.ClusterDeploymentRef
		return ref.Name
	}, timeout).ShouldNot(BeEmpty(), "AgentCluster %s should name a ClusterDeployment", f.name)
	cd := &hivev1.ClusterDeployment{ObjectMeta: metav1.ObjectMeta{Namespace: ref.Namespace, Name: ref.Name}}
	f.get(cd)
	return cd
}

// clusterDeployment returns the ClusterDeployment of the AgentCluster's
// name and namespace, or nil when there is none.
func (f *fixture) clusterDeployment() *hivev1.ClusterDeployment {
	f.t.Helper()
	cd := &hivev1.ClusterDeployment{}
	err := env.Client.Get(context.Background(), client.ObjectKey{Namespace: f.ns, Name: f.name}, cd)
	if apierrors.IsNotFound(err) {
		return nil
	}
	f.g.Expect(err).NotTo(HaveOccurred())
	return cd
}

func (f *fixture) eventuallyAgentClusterInstall() *hiveextv1.AgentClusterInstall {
	f.t.Helper()
	aci := &hiveextv1.AgentClusterInstall{}
	f.g.Eventually(func() error {
		return env.Client.Get(context.Background(), client.ObjectKey{Namespace: f.ns, Name: f.name}, aci)
	}, timeout).Should(Succeed(), "AgentClusterInstall %s should be created", f.name)
	return aci
}

// ownerRefs returns the owner references of the ClusterDeployment of the
// AgentCluster's name.
func (f *fixture) ownerRefs(g Gomega) []metav1.OwnerReference {
	cd := &hivev1.ClusterDeployment{}
	g.Expect(env.Client.Get(context.Background(), client.ObjectKey{Namespace: f.ns, Name: f.name}, cd)).To(Succeed())
	return cd.OwnerReferences
}

// ownerRefOf is the owner reference an AgentCluster puts on its
// ClusterDeployment (upstream L304-309).
func ownerRefOf(ac *capiagentv1.AgentCluster) metav1.OwnerReference {
	return metav1.OwnerReference{
		APIVersion: "capi-provider.agent-install.openshift.io/v1beta1", Kind: "AgentCluster", Name: ac.Name, UID: ac.UID,
	}
}
