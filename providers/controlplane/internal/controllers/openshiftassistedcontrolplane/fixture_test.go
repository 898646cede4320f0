package openshiftassistedcontrolplane_test

import (
	"context"
	"errors"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	hivev1 "github.com/openshift/hive/apis/hive/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/cluster-api/util/conditions"

	controlplanev1 "github.com/paritylab/paritylab/providers/controlplane/api/v1alpha3"
	"github.com/paritylab/paritylab/providers/controlplane/internal/controllers/openshiftassistedcontrolplane"
	"github.com/paritylab/paritylab/providers/internal/testenv"
	hiveextv1 "github.com/paritylab/paritylab/providers/thirdparty/hiveextensions/v1beta1"
)

// fixture is one test's world: a namespace with a provisioned Cluster "c"
// whose control plane "cp" it owns, as the Cluster controller leaves them.
type fixture struct {
	t       *testing.T
	g       *WithT
	ns      string
	r       *openshiftassistedcontrolplane.Reconciler
	cluster *clusterv1.Cluster
	cp      *controlplanev1.OpenshiftAssistedControlPlane
}

type option func(*controlplanev1.OpenshiftAssistedControlPlane)

func withReplicas(n int32) option {
	return func(cp *controlplanev1.OpenshiftAssistedControlPlane) { cp.Spec.Replicas = ptr.To(n) }
}

func newFixture(t *testing.T, opts ...option) *fixture {
	t.Parallel()
	ns := env.Namespace(t)
	f := &fixture{t: t, g: NewWithT(t), ns: ns, r: newReconciler()}
	env.InfraMachineTemplate(t, ns, "cp-template", map[string]any{"flavor": "large"})
	f.cluster = &clusterv1.Cluster{
		ObjectMeta: metav1.ObjectMeta{Name: "c", Namespace: ns},
		Spec: clusterv1.ClusterSpec{
			ClusterNetwork: clusterv1.ClusterNetwork{
				Pods:     clusterv1.NetworkRanges{CIDRBlocks: []string{"10.132.0.0/14"}},
				Services: clusterv1.NetworkRanges{CIDRBlocks: []string{"172.31.0.0/16"}},
			},
			ControlPlaneEndpoint: clusterv1.APIEndpoint{Host: "api.c.example.com", Port: 6443},
			ControlPlaneRef: clusterv1.ContractVersionedObjectReference{
				APIGroup: controlplanev1.GroupName, Kind: "OpenshiftAssistedControlPlane", Name: "cp",
			},
		},
	}
	env.Create(t, f.cluster)
	f.g.Expect(env.Update(client.ObjectKeyFromObject(f.cluster), f.cluster, func() {
		f.cluster.Status.Initialization.InfrastructureProvisioned = ptr.To(true)
	}, true)).To(Succeed())
	f.cp = &controlplanev1.OpenshiftAssistedControlPlane{
		ObjectMeta: metav1.ObjectMeta{
			Name: "cp", Namespace: ns,
			Labels:          map[string]string{clusterv1.ClusterNameLabel: "c"},
			Annotations:     map[string]string{controlplanev1.ReleaseImageRepositoryAnnotation: registry.Host() + "/" + releaseRepository},
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(f.cluster, clusterv1.GroupVersion.WithKind("Cluster"))},
		},
		Spec: controlplanev1.OpenshiftAssistedControlPlaneSpec{
			DistributionVersion: "4.17.3",
			Replicas:            ptr.To[int32](3),
			MachineTemplate: controlplanev1.OpenshiftAssistedControlPlaneMachineTemplate{
				ObjectMeta: clusterv1.ObjectMeta{Labels: map[string]string{"team": "metal"}, Annotations: map[string]string{"note": "cp"}},
				Spec: controlplanev1.OpenshiftAssistedControlPlaneMachineTemplateSpec{
					InfrastructureRef: clusterv1.ContractVersionedObjectReference{APIGroup: testenv.InfraGroup, Kind: "TestMachineTemplate", Name: "cp-template"},
					Deletion:          controlplanev1.OpenshiftAssistedControlPlaneMachineTemplateDeletionSpec{NodeDrainTimeoutSeconds: ptr.To[int32](120)},
				},
			},
			Config: controlplanev1.OpenshiftAssistedControlPlaneConfigSpec{
				BaseDomain:  "example.com",
				APIVIPs:     []string{"192.0.2.5"},
				IngressVIPs: []string{"192.0.2.6"},
			},
		},
	}
	for _, o := range opts {
		o(f.cp)
	}
	env.Create(t, f.cp)
	return f
}

// reconcile runs one reconcile of the control plane.
func (f *fixture) reconcile() ctrl.Result {
	f.t.Helper()
	res, err := f.r.Reconcile(context.Background(), ctrl.Request{NamespacedName: client.ObjectKeyFromObject(f.cp)})
	f.g.Expect(err).NotTo(HaveOccurred())
	return res
}

// reconcileErr runs the bookkeeping reconciles as begin does, then a
// working one that may fail.
func (f *fixture) reconcileErr() (ctrl.Result, error) {
	f.t.Helper()
	f.reconcileN(2)
	return f.r.Reconcile(context.Background(), ctrl.Request{NamespacedName: client.ObjectKeyFromObject(f.cp)})
}

// begin runs the bookkeeping reconciles (the Paused condition, the
// finalizer) and then the first working one.
func (f *fixture) begin() {
	f.t.Helper()
	f.reconcileN(2)
	f.g.Expect(f.get().Finalizers).To(ContainElement(openshiftassistedcontrolplane.Finalizer))
	f.reconcile()
}

// reconcileN runs n reconciles.
func (f *fixture) reconcileN(n int) {
	f.t.Helper()
	for range n {
		f.reconcile()
	}
}

func (f *fixture) get() *controlplanev1.OpenshiftAssistedControlPlane {
	f.t.Helper()
	cp := &controlplanev1.OpenshiftAssistedControlPlane{}
	f.g.Expect(env.Client.Get(context.Background(), client.ObjectKeyFromObject(f.cp), cp)).To(Succeed())
	return cp
}

// update changes the control plane's spec or metadata through the API
// server (and so its webhook).
func (f *fixture) update(change func(cp *controlplanev1.OpenshiftAssistedControlPlane)) {
	f.t.Helper()
	cp := &controlplanev1.OpenshiftAssistedControlPlane{}
	f.g.Expect(env.Update(client.ObjectKeyFromObject(f.cp), cp, func() { change(cp) }, false)).To(Succeed())
}

func (f *fixture) condition(t string) *metav1.Condition {
	return conditions.Get(f.get(), t)
}

func (f *fixture) expectCondition(t string, status metav1.ConditionStatus, reason string) *metav1.Condition {
	f.t.Helper()
	c := f.condition(t)
	f.g.Expect(c).NotTo(BeNil(), "condition %s", t)
	f.g.Expect(c.Status).To(Equal(status), "condition %s: %s", t, c.Message)
	if reason != "" {
		f.g.Expect(c.Reason).To(Equal(reason), "condition %s: %s", t, c.Message)
	}
	return c
}

// machines lists the control plane's Machines, oldest first.
func (f *fixture) machines() []clusterv1.Machine {
	f.t.Helper()
	list := &clusterv1.MachineList{}
	f.g.Expect(env.Client.List(context.Background(), list, client.InNamespace(f.ns),
		client.MatchingLabels{clusterv1.MachineControlPlaneNameLabel: "cp"})).To(Succeed())
	return list.Items
}

func names(ms []clusterv1.Machine) []string {
	var out []string
	for _, m := range ms {
		out = append(out, m.Name)
	}
	return out
}

// scaleUpSlowly creates n Machines one reconcile at a time, a second apart
// so that their creation times order them.
func (f *fixture) scaleUpSlowly(n int) []string {
	f.t.Helper()
	var created []string
	for i := range n {
		if i > 0 {
			time.Sleep(1100 * time.Millisecond)
		}
		before := map[string]bool{}
		for _, m := range f.machines() {
			before[m.Name] = true
		}
		f.reconcile()
		for _, m := range f.machines() {
			if !before[m.Name] {
				created = append(created, m.Name)
			}
		}
	}
	f.g.Expect(created).To(HaveLen(n))
	return created
}

// install moves the AgentClusterInstall to state, with the admin
// kubeconfig published from that of the API server once installed.
func (f *fixture) install(state string) *hiveextv1.AgentClusterInstall {
	f.t.Helper()
	aci := &hiveextv1.AgentClusterInstall{}
	key := client.ObjectKey{Namespace: f.ns, Name: "c"}
	if state == hiveextv1.ClusterStateFinalizing || state == hiveextv1.ClusterStateInstalled || state == hiveextv1.ClusterStateAddingHosts {
		kubeconfig, err := env.Kubeconfig()
		f.g.Expect(err).NotTo(HaveOccurred())
		admin := &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Name: "c-admin-kubeconfig", Namespace: f.ns},
			Data:       map[string][]byte{"kubeconfig": kubeconfig},
		}
		if err := env.Client.Create(context.Background(), admin); err != nil {
			f.g.Expect(client.IgnoreAlreadyExists(err)).To(Succeed())
		}
		f.g.Expect(env.Update(key, aci, func() {
			aci.Spec.ClusterMetadata = &hivev1.ClusterMetadata{
				ClusterID: "id", InfraID: "infra", AdminKubeconfigSecretRef: corev1.LocalObjectReference{Name: admin.Name},
			}
		}, false)).To(Succeed())
	}
	f.g.Expect(env.Update(key, aci, func() { aci.Status.DebugInfo.State = state }, true)).To(Succeed())
	return aci
}

type clusterv1Cluster = clusterv1.Cluster

var errUnreachable = errors.New("dial tcp 192.0.2.1:6443: connect: connection refused")
