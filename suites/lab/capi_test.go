package labsuite

import (
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
)

var _ = Describe("Cluster API core controllers on the hub", Label("lab"), func() {
	var (
		c         client.Client
		namespace string
	)

	BeforeEach(func(ctx SpecContext) {
		c = shared.lab.Client()
		Expect(installTestProviderCRDs(ctx, c)).To(Succeed())
		ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "capi-"}}
		Expect(c.Create(ctx, ns)).To(Succeed())
		namespace = ns.Name
		DeferCleanup(func(ctx SpecContext) {
			Expect(c.Delete(ctx, ns)).To(Succeed())
			Eventually(func() error {
				return c.Get(ctx, client.ObjectKeyFromObject(ns), ns)
			}).WithContext(ctx).Should(MatchError(ContainSubstring("not found")),
				"the hub's namespace and garbage-collector controllers remove the namespace and everything in it")
		}, NodeTimeout(2*time.Minute))
	})

	It("reconcile a Cluster and a MachineSet through their webhooks", func(ctx SpecContext) {
		By("creating a Cluster whose infrastructure is provisioned")
		infraCluster := testInfraObject("LabCluster", namespace, "lab", nil)
		Expect(c.Create(ctx, infraCluster)).To(Succeed())
		Expect(unstructured.SetNestedField(infraCluster.Object, true, "status", "initialization", "provisioned")).To(Succeed())
		Expect(c.Status().Update(ctx, infraCluster)).To(Succeed())
		cluster := &clusterv1.Cluster{
			ObjectMeta: metav1.ObjectMeta{Name: "lab", Namespace: namespace},
			Spec: clusterv1.ClusterSpec{InfrastructureRef: clusterv1.ContractVersionedObjectReference{
				APIGroup: testInfraGroup, Kind: "LabCluster", Name: "lab",
			}},
		}
		Expect(c.Create(ctx, cluster)).To(Succeed())
		Eventually(func(g Gomega) {
			g.Expect(c.Get(ctx, client.ObjectKeyFromObject(cluster), cluster)).To(Succeed())
			g.Expect(cluster.Status.Initialization.InfrastructureProvisioned).To(HaveValue(BeTrue()))
			g.Expect(cluster.Finalizers).To(ContainElement(clusterv1.ClusterFinalizer))
		}).WithContext(ctx).Should(Succeed(), "the Cluster controller should adopt the provisioned infrastructure")
		Expect(c.Get(ctx, client.ObjectKeyFromObject(infraCluster), infraCluster)).To(Succeed())
		Expect(infraCluster.GetOwnerReferences()).To(ContainElement(HaveField("Name", "lab")), "CAPI owns the infrastructure cluster")

		By("creating a MachineSet of 2 with no selector and no cluster-name label")
		Expect(c.Create(ctx, testInfraObject("LabMachineTemplate", namespace, "workers", map[string]any{
			"template": map[string]any{"spec": map[string]any{"flavor": "lab"}},
		}))).To(Succeed())
		ms := testMachineSet(namespace, 2)
		Expect(c.Create(ctx, ms)).To(Succeed())
		Expect(ms.Labels).To(HaveKeyWithValue(clusterv1.ClusterNameLabel, "lab"), "the defaulting webhook sets the cluster-name label")
		Expect(ms.Spec.Selector.MatchLabels).To(HaveKeyWithValue(clusterv1.MachineSetNameLabel, "workers"), "the defaulting webhook fills the selector")

		By("waiting for the MachineSet controller to create 2 Machines with cloned infrastructure")
		Eventually(func(g Gomega) {
			g.Expect(ownedMachines(ctx, c, namespace)).To(HaveLen(2))
		}).WithContext(ctx).Should(Succeed())
		for _, m := range ownedMachines(ctx, c, namespace) {
			infra := &unstructured.Unstructured{}
			infra.SetAPIVersion(testInfraGroup + "/" + testInfraVersion)
			infra.SetKind("LabMachine")
			Expect(c.Get(ctx, client.ObjectKey{Namespace: namespace, Name: m.Spec.InfrastructureRef.Name}, infra)).To(Succeed())
			Expect(infra.GetAnnotations()).To(HaveKeyWithValue(clusterv1.TemplateClonedFromNameAnnotation, "workers"))
			flavor, _, _ := unstructured.NestedString(infra.Object, "spec", "flavor")
			Expect(flavor).To(Equal("lab"), "the template's spec is cloned into the LabMachine")
		}

		By("reading the MachineSet at v1beta1, which only the conversion webhook can serve")
		old := &unstructured.Unstructured{}
		old.SetAPIVersion("cluster.x-k8s.io/v1beta1")
		old.SetKind("MachineSet")
		Expect(c.Get(ctx, client.ObjectKeyFromObject(ms), old)).To(Succeed())
		apiVersion, _, _ := unstructured.NestedString(old.Object, "spec", "template", "spec", "infrastructureRef", "apiVersion")
		Expect(apiVersion).To(Equal(testInfraGroup+"/"+testInfraVersion), "conversion fills apiVersion from the CRD's contract label")

		By("rejecting an invalid MachineSet with a message that says what to fix")
		bad := testMachineSet(namespace, 1)
		bad.Name, bad.Spec.Template.Spec.ClusterName = "bad", "other"
		err := c.Create(ctx, bad)
		Expect(err).To(MatchError(ContainSubstring("spec.clusterName and spec.template.spec.clusterName must be set to the same value")))

		By("scaling the MachineSet down to 1")
		// A merge patch of the replicas alone, as `kubectl scale` sends:
		// the controllers write the MachineSet concurrently.
		Expect(c.Patch(ctx, ms, client.RawPatch(types.MergePatchType, []byte(`{"spec":{"replicas":1}}`)))).To(Succeed())
		Eventually(func(g Gomega) {
			g.Expect(ownedMachines(ctx, c, namespace)).To(HaveLen(1))
		}).WithContext(ctx).Should(Succeed(), "the MachineSet controller deletes a Machine and the Machine controller finalizes it")
	}, SpecTimeout(2*time.Minute))
})

func testInfraObject(kind, namespace, name string, spec map[string]any) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{"spec": spec}}
	if spec == nil {
		u.Object["spec"] = map[string]any{}
	}
	u.SetAPIVersion(testInfraGroup + "/" + testInfraVersion)
	u.SetKind(kind)
	u.SetNamespace(namespace)
	u.SetName(name)
	return u
}

func testMachineSet(namespace string, replicas int32) *clusterv1.MachineSet {
	return &clusterv1.MachineSet{
		ObjectMeta: metav1.ObjectMeta{Name: "workers", Namespace: namespace},
		Spec: clusterv1.MachineSetSpec{
			ClusterName: "lab",
			Replicas:    ptr.To(replicas),
			Template: clusterv1.MachineTemplateSpec{Spec: clusterv1.MachineSpec{
				ClusterName: "lab",
				Bootstrap:   clusterv1.Bootstrap{DataSecretName: ptr.To("workers-userdata")},
				InfrastructureRef: clusterv1.ContractVersionedObjectReference{
					APIGroup: testInfraGroup, Kind: "LabMachineTemplate", Name: "workers",
				},
			}},
		},
	}
}

func ownedMachines(ctx SpecContext, c client.Client, namespace string) []clusterv1.Machine {
	list := &clusterv1.MachineList{}
	Expect(c.List(ctx, list, client.InNamespace(namespace))).To(Succeed())
	var out []clusterv1.Machine
	for _, m := range list.Items {
		if m.DeletionTimestamp == nil && metav1.GetControllerOf(&m) != nil && metav1.GetControllerOf(&m).Kind == "MachineSet" {
			out = append(out, m)
		}
	}
	return out
}
