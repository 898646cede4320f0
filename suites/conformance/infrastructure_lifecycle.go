package conformance

import (
	"context"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
)

// VerifyInfrastructureProviderLifecycle creates a Cluster with its
// InfraCluster, paused, and a Machine with its InfraMachine, not yet owned
// by it, as Cluster API and a user would, once the provider has what it
// needs (Provision), and checks: the cluster makes no progress while
// paused, and is provisioned with its endpoint once unpaused; the machine
// makes none without its owner Machine, nor owned but paused, and is
// provisioned with a provider ID and well-formed addresses once unpaused.
func VerifyInfrastructureProviderLifecycle(ctx context.Context, input InfrastructureProviderSpecInput) {
	GinkgoHelper()
	input.validate()
	c, in := input.Client, input.Intervals
	contract := InfrastructureContract(ctx, input)
	ns := createNamespace(ctx, c, "conformance-infrastructure")
	cgvk, mgvk := input.ClusterGVK, input.MachineGVK
	cluster := createCluster(ctx, c, ns, "c", clusterv1.ContractVersionedObjectReference{},
		clusterv1.ContractVersionedObjectReference{APIGroup: cgvk.Group, Kind: cgvk.Kind, Name: "c"})
	labels := map[string]string{clusterv1.ClusterNameLabel: cluster.Name}
	paused := input.PausedValue

	By("creating the Machine with its bootstrap data")
	machine := &clusterv1.Machine{
		ObjectMeta: metav1.ObjectMeta{Name: "m0", Namespace: ns, Labels: labels},
		Spec: clusterv1.MachineSpec{
			ClusterName:       cluster.Name,
			Bootstrap:         clusterv1.Bootstrap{DataSecretName: ptr.To("m0-bootstrap")},
			InfrastructureRef: clusterv1.ContractVersionedObjectReference{APIGroup: mgvk.Group, Kind: mgvk.Kind, Name: "m0"},
		},
	}
	Expect(c.Create(ctx, machine)).To(Succeed())
	Expect(c.Create(ctx, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "m0-bootstrap", Namespace: ns, Labels: labels},
		Type:       clusterv1.ClusterSecretType,
		Data:       map[string][]byte{"value": input.BootstrapData, "format": []byte(input.BootstrapFormat)},
	})).To(Succeed())
	infraCluster := input.NewCluster(ns, "c")
	setMeta(infraCluster, cgvk, ns, "c", labels, map[string]string{clusterv1.PausedAnnotation: paused})
	infraCluster.SetOwnerReferences([]metav1.OwnerReference{ownerRef(cluster, clusterv1.GroupVersion.WithKind("Cluster"), true)})
	// No owner reference yet: the Machine controller sets it later.
	infraMachine := input.NewMachine(ns, "m0")
	setMeta(infraMachine, mgvk, ns, "m0", labels, nil)
	// Before the infrastructure exists, so that only the pause and the
	// missing owner can hold the provider back.
	hooks := ProvisionInput{Cluster: cluster, Machine: machine, InfraCluster: infraCluster, InfraMachine: infraMachine}
	if input.Provision != nil {
		Expect(input.Provision(ctx, hooks)).To(Succeed(), "preparing the provider")
	}

	By("creating the InfraCluster, paused: no progress")
	createVisible(ctx, c, in, infraCluster)
	verifyPaused(ctx, input, contract, true, infraCluster)
	verifyNoProgress(ctx, input, contract, "while paused", infraCluster)

	By("unpausing the InfraCluster")
	setAnnotation(ctx, c, infraCluster, clusterv1.PausedAnnotation, nil)
	verifyPaused(ctx, input, contract, false, infraCluster)
	eventually(ctx, in, func() error {
		return checkAll(ctx, input, func(u *unstructured.Unstructured) error { return CheckClusterProvisioned(u, contract) }, infraCluster)
	}, describe(infraCluster)+" should be provisioned as the contract says")
	Expect(CheckConditions(infraCluster)).To(Succeed())

	By("creating the InfraMachine, which no Machine owns yet: no progress")
	createVisible(ctx, c, in, infraMachine)
	verifyNoProgress(ctx, input, contract, "until a Machine owns it", infraMachine)

	By("pausing it, then owning it by its Machine as the Machine controller does: no progress")
	setAnnotation(ctx, c, infraMachine, clusterv1.PausedAnnotation, &paused)
	change(ctx, c, infraMachine, func() {
		infraMachine.SetOwnerReferences([]metav1.OwnerReference{ownerRef(machine, clusterv1.GroupVersion.WithKind("Machine"), true)})
	})
	verifyPaused(ctx, input, contract, true, infraMachine)
	verifyNoProgress(ctx, input, contract, "while paused", infraMachine)

	By("unpausing the InfraMachine")
	setAnnotation(ctx, c, infraMachine, clusterv1.PausedAnnotation, nil)
	verifyPaused(ctx, input, contract, false, infraMachine)
	if input.Finish != nil {
		Expect(input.Finish(ctx, hooks)).To(Succeed(), "finishing the machine's provisioning")
	}
	eventually(ctx, in, func() error {
		return checkAll(ctx, input, func(u *unstructured.Unstructured) error { return CheckMachineProvisioned(u, contract) }, infraMachine)
	}, describe(infraMachine)+" should be provisioned as the contract says")
	Expect(CheckConditions(infraMachine)).To(Succeed())
}

// verifyNoProgress checks for the pause window that obj is not
// provisioned (see CheckNotProvisioned); why says what holds it back.
func verifyNoProgress(ctx context.Context, input InfrastructureProviderSpecInput, contract, why string, obj *unstructured.Unstructured) {
	GinkgoHelper()
	consistently(ctx, input.Intervals, func() error {
		return checkAll(ctx, input, func(u *unstructured.Unstructured) error { return CheckNotProvisioned(u, contract, why) }, obj)
	}, describe(obj)+" makes no progress "+why)
}

// verifyPaused checks the Paused condition, which only the v1beta2
// contract asks for.
func verifyPaused(ctx context.Context, input InfrastructureProviderSpecInput, contract string, paused bool, objs ...*unstructured.Unstructured) {
	GinkgoHelper()
	if contract == "v1beta1" {
		return
	}
	eventually(ctx, input.Intervals, func() error {
		return checkAll(ctx, input, func(u *unstructured.Unstructured) error { return CheckPaused(u, paused) }, objs...)
	}, "infrastructure reports its pause in the Paused condition")
}

// checkAll reads each object again and checks it.
func checkAll(ctx context.Context, input InfrastructureProviderSpecInput, check func(*unstructured.Unstructured) error, objs ...*unstructured.Unstructured) error {
	for _, u := range objs {
		if err := get(ctx, input.Client, u); err != nil {
			return err
		}
		if err := check(u); err != nil {
			return err
		}
	}
	return nil
}

// setMeta gives a provider object its kind, place, labels and annotations.
func setMeta(u *unstructured.Unstructured, gvk schema.GroupVersionKind, namespace, name string, labels, annotations map[string]string) {
	u.SetGroupVersionKind(gvk)
	u.SetNamespace(namespace)
	u.SetName(name)
	u.SetLabels(labels)
	u.SetAnnotations(annotations)
}
