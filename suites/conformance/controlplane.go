package conformance

import (
	"context"
	"fmt"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
)

// ControlPlaneProviderSpecInput points the control-plane spec at a
// provider.
type ControlPlaneProviderSpecInput struct {
	// Client reaches the management cluster the provider runs against.
	Client client.Client
	// ControlPlaneGVK is the control-plane kind, in the version
	// implementing the contract.
	ControlPlaneGVK schema.GroupVersionKind
	// InfrastructureMachineTemplate creates, in namespace, the
	// infrastructure machine template control-plane Machines are cloned
	// from, and returns a reference to it.
	InfrastructureMachineTemplate func(ctx context.Context, namespace string) (clusterv1.ContractVersionedObjectReference, error)
	// NewControlPlane returns a valid control plane named name in
	// namespace using the infrastructure template (the spec sets its
	// labels, owner and spec.replicas as Cluster API and a user would).
	NewControlPlane func(namespace, name string, infrastructure clusterv1.ContractVersionedObjectReference) *unstructured.Unstructured
	// Initialize, when set, does what the provider needs besides Cluster
	// API objects to initialize the control plane (e.g. finish an install).
	Initialize func(ctx context.Context, cluster *clusterv1.Cluster) error
	// Replicas is the initial size (default 3) and ScaleTo the size the
	// scale subresource sets (default Replicas+2: etcd likes odd sizes).
	Replicas, ScaleTo int64
	// ExpectVersion says the provider reports status.version.
	ExpectVersion bool
	// Intervals bound the waits.
	Intervals Intervals
}

func (in *ControlPlaneProviderSpecInput) validate() {
	GinkgoHelper()
	Expect(in.Client).NotTo(BeNil(), "Invalid argument. input.Client can't be nil when calling ControlPlaneProviderSpec")
	Expect(in.ControlPlaneGVK.Kind).NotTo(BeEmpty(), "Invalid argument. input.ControlPlaneGVK can't be empty when calling ControlPlaneProviderSpec")
	Expect(in.NewControlPlane).NotTo(BeNil(), "Invalid argument. input.NewControlPlane can't be nil when calling ControlPlaneProviderSpec")
	Expect(in.InfrastructureMachineTemplate).NotTo(BeNil(), "Invalid argument. input.InfrastructureMachineTemplate can't be nil when calling ControlPlaneProviderSpec")
	if in.Replicas == 0 {
		in.Replicas = 3
	}
	if in.ScaleTo == 0 {
		in.ScaleTo = in.Replicas + 2
	}
	in.Intervals = in.Intervals.withDefaults()
}

// ControlPlaneProviderSpec checks a control-plane provider against the
// v1beta2 control-plane contract.
func ControlPlaneProviderSpec(ctx context.Context, inputGetter func() ControlPlaneProviderSpecInput) {
	var input ControlPlaneProviderSpecInput
	BeforeEach(func() {
		input = inputGetter()
		input.validate()
	})
	It("serves the control plane with the scale subresource the contract wants", Label("crd"), func(ctx SpecContext) {
		crd, err := CheckCRD(ctx, input.Client, input.ControlPlaneGVK)
		Expect(err).NotTo(HaveOccurred())
		Expect(CheckScaleSubresource(crd, input.ControlPlaneGVK.Version)).To(Succeed())
	})
	It("manages labelled, owned Machines, scales through /scale, pauses and initializes", Label("status", "scale", "pause"), func(ctx SpecContext) {
		VerifyControlPlaneProviderLifecycle(ctx, input)
	})
}

// VerifyControlPlaneProviderLifecycle runs a control plane through its
// contract: Machines and counters, the scale subresource both ways,
// pausing, initialization and the kubeconfig Secret.
func VerifyControlPlaneProviderLifecycle(ctx context.Context, input ControlPlaneProviderSpecInput) {
	GinkgoHelper()
	input.validate()
	c, in := input.Client, input.Intervals
	ns := createNamespace(ctx, c, "conformance-controlplane")
	infra, err := input.InfrastructureMachineTemplate(ctx, ns)
	Expect(err).NotTo(HaveOccurred(), "creating the infrastructure machine template")
	gvk := input.ControlPlaneGVK
	cluster := createCluster(ctx, c, ns, "c", clusterv1.ContractVersionedObjectReference{APIGroup: gvk.Group, Kind: gvk.Kind, Name: "cp"}, clusterv1.ContractVersionedObjectReference{})

	By("creating the control plane, owned by its Cluster as the Cluster controller leaves it")
	cp := input.NewControlPlane(ns, "cp", infra)
	cp.SetGroupVersionKind(gvk)
	cp.SetNamespace(ns)
	cp.SetName("cp")
	cp.SetLabels(map[string]string{clusterv1.ClusterNameLabel: cluster.Name})
	cp.SetOwnerReferences(append(cp.GetOwnerReferences(), ownerRef(cluster, clusterv1.GroupVersion.WithKind("Cluster"), true)))
	Expect(unstructured.SetNestedField(cp.Object, input.Replicas, "spec", "replicas")).To(Succeed())
	Expect(c.Create(ctx, cp)).To(Succeed())
	VerifyControlPlaneReplicas(ctx, c, cp, cluster.Name, input.Replicas, in)

	By("scaling up and down through the scale subresource")
	scale(ctx, c, cp, input.ScaleTo)
	VerifyControlPlaneReplicas(ctx, c, cp, cluster.Name, input.ScaleTo, in)
	verifyScaleStatus(ctx, c, cp, input.ScaleTo)
	scale(ctx, c, cp, input.Replicas)
	VerifyControlPlaneReplicas(ctx, c, cp, cluster.Name, input.Replicas, in)

	By("pausing: Paused=True and no scaling")
	paused := ""
	setAnnotation(ctx, c, cp, clusterv1.PausedAnnotation, &paused)
	eventually(ctx, in, func() error {
		if err := get(ctx, c, cp); err != nil {
			return err
		}
		return CheckPaused(cp, true)
	}, "a paused control plane reports Paused=True")
	scale(ctx, c, cp, input.ScaleTo)
	consistently(ctx, in, func() error { return machineCount(ctx, c, cp, cluster.Name, input.Replicas) }, "a paused control plane does not scale")
	setAnnotation(ctx, c, cp, clusterv1.PausedAnnotation, nil)
	VerifyControlPlaneReplicas(ctx, c, cp, cluster.Name, input.ScaleTo, in)
	scale(ctx, c, cp, input.Replicas)
	VerifyControlPlaneReplicas(ctx, c, cp, cluster.Name, input.Replicas, in)

	By("initializing")
	if input.Initialize != nil {
		Expect(input.Initialize(ctx, cluster)).To(Succeed(), "initializing the control plane")
	}
	eventually(ctx, in, func() error {
		if err := get(ctx, c, cp); err != nil {
			return err
		}
		if err := CheckInitialized(cp); err != nil {
			return err
		}
		if input.ExpectVersion {
			if err := CheckVersion(cp); err != nil {
				return err
			}
		}
		return CheckKubeconfig(ctx, c, cluster)
	}, "the control plane should initialize and publish the Cluster's kubeconfig")
	Expect(CheckConditions(cp)).To(Succeed())
}

// VerifyControlPlaneReplicas waits until the control plane has want
// Machines, labelled and owned as the contract says, and counts them right.
func VerifyControlPlaneReplicas(ctx context.Context, c client.Client, cp *unstructured.Unstructured, clusterName string, want int64, in Intervals) {
	GinkgoHelper()
	eventually(ctx, in.withDefaults(), func() error {
		if err := get(ctx, c, cp); err != nil {
			return err
		}
		status, machines, err := CheckControlPlaneStatus(ctx, c, cp)
		if err != nil {
			return err
		}
		if status.Replicas != want {
			return fmt.Errorf("%s: %d Machines, want %d", describe(cp), status.Replicas, want)
		}
		if err := CheckControlPlaneMachines(cp, clusterName, machines); err != nil {
			return err
		}
		return CheckConditions(cp)
	}, fmt.Sprintf("%s should have %d Machines as the contract describes them", describe(cp), want))
}

func machineCount(ctx context.Context, c client.Client, cp *unstructured.Unstructured, clusterName string, want int64) error {
	list := &clusterv1.MachineList{}
	if err := c.List(ctx, list, client.InNamespace(cp.GetNamespace()), client.MatchingLabels{
		clusterv1.ClusterNameLabel: clusterName, clusterv1.MachineControlPlaneLabel: "",
	}); err != nil {
		return err
	}
	if int64(len(list.Items)) != want {
		return fmt.Errorf("%s: %d control-plane Machines, want %d", describe(cp), len(list.Items), want)
	}
	return nil
}

// newScale is an empty autoscaling/v1 Scale, unstructured like the
// control plane it is read from.
func newScale() *unstructured.Unstructured {
	s := &unstructured.Unstructured{}
	s.SetGroupVersionKind(autoscalingv1.SchemeGroupVersion.WithKind("Scale"))
	return s
}

// scale sets spec.replicas through the scale subresource.
func scale(ctx context.Context, c client.Client, cp *unstructured.Unstructured, n int64) {
	GinkgoHelper()
	Eventually(ctx, func() error {
		s := newScale()
		if err := c.SubResource("scale").Get(ctx, cp, s); err != nil {
			return err
		}
		if err := unstructured.SetNestedField(s.Object, n, "spec", "replicas"); err != nil {
			return err
		}
		return c.SubResource("scale").Update(ctx, cp, client.WithSubResourceBody(s))
	}).WithTimeout(30*time.Second).Should(Succeed(), "the scale subresource accepts replicas=%d", n)
}

// verifyScaleStatus checks the scale subresource reflects the status.
func verifyScaleStatus(ctx context.Context, c client.Client, cp *unstructured.Unstructured, want int64) {
	GinkgoHelper()
	s := newScale()
	Expect(c.SubResource("scale").Get(ctx, cp, s)).To(Succeed())
	Expect(get(ctx, c, cp)).To(Succeed())
	sel, _, _ := unstructured.NestedString(cp.Object, "status", "selector")
	replicas, _, _ := unstructured.NestedInt64(s.Object, "status", "replicas")
	scaleSel, _, _ := unstructured.NestedString(s.Object, "status", "selector")
	Expect(replicas).To(Equal(want), "scale status.replicas is the control plane's status.replicas")
	Expect(scaleSel).To(Equal(sel), "scale status.selector is the control plane's status.selector")
}
