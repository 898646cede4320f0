package conformance

import (
	"context"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
)

// InfrastructureProviderSpecInput points the infrastructure spec at a
// provider.
type InfrastructureProviderSpecInput struct {
	// Client reaches the management cluster the provider runs against.
	Client client.Client
	// ClusterGVK and MachineGVK are the InfraCluster and InfraMachine
	// kinds, in the version their CRDs' contract label lists.
	ClusterGVK, MachineGVK schema.GroupVersionKind
	// TemplateGVK is the InfraMachineTemplate kind. Default: MachineGVK's
	// kind followed by "Template".
	TemplateGVK schema.GroupVersionKind
	// NewCluster and NewMachine return a valid InfraCluster and
	// InfraMachine named name in namespace (spec only; the spec sets
	// labels, owners and the pause as Cluster API and a user would).
	NewCluster, NewMachine func(namespace, name string) *unstructured.Unstructured
	// BootstrapData and BootstrapFormat fill the Machine's bootstrap data
	// Secret (keys "value" and "format"), as a bootstrap provider would.
	// Default: an empty cloud-config.
	BootstrapData   []byte
	BootstrapFormat string
	// Provision, when set, does what the provider needs besides Cluster
	// API objects to provision (hosts to take, a cluster to join). It runs
	// once the Cluster and the Machine exist and before the InfraCluster
	// and InfraMachine do (their names and namespace are set), so that
	// the pause and the missing owner Machine are what hold the provider
	// back.
	Provision func(ctx context.Context, in ProvisionInput) error
	// Finish, when set, does what happens outside Cluster API while the
	// machine provisions (a host's install finishing); it runs once the
	// InfraMachine is owned and unpaused, and may wait for the provider.
	Finish func(ctx context.Context, in ProvisionInput) error
	// PausedValue is the value of the cluster.x-k8s.io/paused annotation
	// the spec pauses with. Default empty: Cluster API pauses on the
	// annotation's presence (annotations.HasPaused), whatever its value.
	PausedValue string
	// Components and Metadata, when set, are the provider's clusterctl
	// components.yaml and metadata.yaml; ProviderLabel is the
	// cluster.x-k8s.io/provider value of its objects.
	Components, Metadata []byte
	ProviderLabel        string
	// Intervals bound the waits.
	Intervals Intervals
}

// ProvisionInput is what a provider's Provision and Finish hooks get.
type ProvisionInput struct {
	Cluster                    *clusterv1.Cluster
	Machine                    *clusterv1.Machine
	InfraCluster, InfraMachine *unstructured.Unstructured
}

func (in *InfrastructureProviderSpecInput) validate() {
	GinkgoHelper()
	Expect(in.Client).NotTo(BeNil(), "Invalid argument. input.Client can't be nil when calling InfrastructureProviderSpec")
	Expect(in.ClusterGVK.Kind).NotTo(BeEmpty(), "Invalid argument. input.ClusterGVK can't be empty when calling InfrastructureProviderSpec")
	Expect(in.MachineGVK.Kind).NotTo(BeEmpty(), "Invalid argument. input.MachineGVK can't be empty when calling InfrastructureProviderSpec")
	Expect(in.NewCluster).NotTo(BeNil(), "Invalid argument. input.NewCluster can't be nil when calling InfrastructureProviderSpec")
	Expect(in.NewMachine).NotTo(BeNil(), "Invalid argument. input.NewMachine can't be nil when calling InfrastructureProviderSpec")
	if in.Components != nil {
		Expect(in.Metadata).NotTo(BeNil(), "Invalid argument. input.Metadata can't be nil with input.Components when calling InfrastructureProviderSpec")
		Expect(in.ProviderLabel).NotTo(BeEmpty(), "Invalid argument. input.ProviderLabel can't be empty with input.Components when calling InfrastructureProviderSpec")
	}
	if in.TemplateGVK.Kind == "" {
		in.TemplateGVK = in.MachineGVK.GroupVersion().WithKind(in.MachineGVK.Kind + "Template")
	}
	if in.BootstrapFormat == "" {
		in.BootstrapFormat = "cloud-config"
	}
	in.Intervals = in.Intervals.withDefaults()
}

// InfrastructureProviderSpec checks an infrastructure provider against the
// contract its CRDs declare (v1beta2, or v1beta1 which Cluster API still
// reads).
func InfrastructureProviderSpec(ctx context.Context, inputGetter func() InfrastructureProviderSpecInput) {
	var input InfrastructureProviderSpecInput
	BeforeEach(func() {
		input = inputGetter()
		input.validate()
	})
	It("serves its kinds and ships its clusterctl manifests under one declared contract", Label("crd"), func(ctx SpecContext) {
		VerifyInfrastructureProviderCRDs(ctx, input)
	})
	It("provisions the cluster and, once a Machine owns it, the machine; not while paused", Label("status", "pause"), func(ctx SpecContext) {
		VerifyInfrastructureProviderLifecycle(ctx, input)
	})
}

// VerifyInfrastructureProviderCRDs checks the three CRDs declare the same
// contract, and components.yaml and metadata.yaml (when given) agree.
func VerifyInfrastructureProviderCRDs(ctx context.Context, input InfrastructureProviderSpecInput) {
	GinkgoHelper()
	input.validate()
	contract := InfrastructureContract(ctx, input)
	templateContract, err := CheckInfrastructureTemplateCRD(ctx, input.Client, input.TemplateGVK)
	Expect(err).NotTo(HaveOccurred())
	Expect(templateContract).To(Equal(contract), "the machine template declares the machine's contract")
	if input.Components == nil {
		return
	}
	declared, err := CheckComponents(input.Components, input.Metadata, input.ProviderLabel)
	Expect(err).NotTo(HaveOccurred())
	Expect(declared).To(Equal(contract), "metadata.yaml's newest release series names the contract the served CRDs declare")
}

// InfrastructureContract checks the InfraCluster's and InfraMachine's CRDs
// and returns the contract both declare.
func InfrastructureContract(ctx context.Context, input InfrastructureProviderSpecInput) string {
	GinkgoHelper()
	_, contract, err := CheckInfrastructureCRD(ctx, input.Client, input.ClusterGVK)
	Expect(err).NotTo(HaveOccurred())
	_, machineContract, err := CheckInfrastructureCRD(ctx, input.Client, input.MachineGVK)
	Expect(err).NotTo(HaveOccurred())
	Expect(machineContract).To(Equal(contract), "the InfraMachine declares the InfraCluster's contract")
	return contract
}
