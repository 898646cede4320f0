package conformance

import (
	"context"
	"fmt"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
)

// BootstrapProviderSpecInput points the bootstrap spec at a provider.
type BootstrapProviderSpecInput struct {
	// Client reaches the management cluster the provider runs against.
	Client client.Client
	// ConfigGVK is the bootstrap config kind, in the version implementing
	// the contract; <Kind>Template must exist too.
	ConfigGVK schema.GroupVersionKind
	// NewConfig returns a valid config named name in namespace (spec
	// only; the spec sets labels and owners as Cluster API does).
	NewConfig func(namespace, name string) *unstructured.Unstructured
	// ControlPlaneMachine makes the Machine a control-plane one.
	ControlPlaneMachine bool
	// Prepare, when set, does what the provider needs besides Cluster API
	// objects to produce bootstrap data; it runs once the config is
	// unpaused.
	Prepare func(ctx context.Context, in PrepareInput) error
	// Intervals bound the waits.
	Intervals Intervals
}

// PrepareInput is what a provider's Prepare hook gets.
type PrepareInput struct {
	Cluster *clusterv1.Cluster
	Machine *clusterv1.Machine
	Config  *unstructured.Unstructured
}

func (in *BootstrapProviderSpecInput) validate() {
	GinkgoHelper()
	Expect(in.Client).NotTo(BeNil(), "Invalid argument. input.Client can't be nil when calling BootstrapProviderSpec")
	Expect(in.ConfigGVK.Kind).NotTo(BeEmpty(), "Invalid argument. input.ConfigGVK can't be empty when calling BootstrapProviderSpec")
	Expect(in.NewConfig).NotTo(BeNil(), "Invalid argument. input.NewConfig can't be nil when calling BootstrapProviderSpec")
	in.Intervals = in.Intervals.withDefaults()
}

// BootstrapProviderSpec checks a bootstrap provider against the v1beta2
// bootstrap contract.
func BootstrapProviderSpec(ctx context.Context, inputGetter func() BootstrapProviderSpecInput) {
	var input BootstrapProviderSpecInput
	BeforeEach(func() {
		input = inputGetter()
		input.validate()
	})
	It("serves the config and its template as the contract wants", Label("crd"), func(ctx SpecContext) {
		VerifyBootstrapProviderCRDs(ctx, input)
	})
	It("writes the bootstrap data Secret once unpaused and reports it", Label("status", "pause"), func(ctx SpecContext) {
		VerifyBootstrapProviderLifecycle(ctx, input)
	})
}

// VerifyBootstrapProviderCRDs checks the config's and template's CRDs.
func VerifyBootstrapProviderCRDs(ctx context.Context, input BootstrapProviderSpecInput) {
	GinkgoHelper()
	_, err := CheckCRD(ctx, input.Client, input.ConfigGVK)
	Expect(err).NotTo(HaveOccurred())
	Expect(CheckTemplateCRD(ctx, input.Client, input.ConfigGVK)).To(Succeed())
}

// VerifyBootstrapProviderLifecycle creates a Cluster, a Machine and its
// config as Cluster API would, the config paused, and checks: Paused=True
// and no data while paused; once unpaused (and prepared), the v1beta2
// initialization fields, the data Secret, and the conditions.
func VerifyBootstrapProviderLifecycle(ctx context.Context, input BootstrapProviderSpecInput) {
	GinkgoHelper()
	input.validate()
	c, in := input.Client, input.Intervals
	ns := createNamespace(ctx, c, "conformance-bootstrap")
	cluster := createCluster(ctx, c, ns, "c", clusterv1.ContractVersionedObjectReference{}, clusterv1.ContractVersionedObjectReference{})

	By("creating a Machine and its config, paused, as Cluster API does")
	config := input.NewConfig(ns, "m0")
	config.SetGroupVersionKind(input.ConfigGVK)
	config.SetNamespace(ns)
	config.SetName("m0")
	machine := &clusterv1.Machine{
		ObjectMeta: metav1.ObjectMeta{Name: "m0", Namespace: ns, Labels: map[string]string{clusterv1.ClusterNameLabel: cluster.Name}},
		Spec: clusterv1.MachineSpec{
			ClusterName: cluster.Name,
			Bootstrap: clusterv1.Bootstrap{ConfigRef: clusterv1.ContractVersionedObjectReference{
				APIGroup: input.ConfigGVK.Group, Kind: input.ConfigGVK.Kind, Name: config.GetName(),
			}},
			InfrastructureRef: clusterv1.ContractVersionedObjectReference{APIGroup: "infrastructure.cluster.x-k8s.io", Kind: "ConformanceMachine", Name: "m0"},
		},
	}
	if input.ControlPlaneMachine {
		machine.Labels[clusterv1.MachineControlPlaneLabel] = ""
	}
	Expect(c.Create(ctx, machine)).To(Succeed())
	config.SetLabels(map[string]string{clusterv1.ClusterNameLabel: cluster.Name})
	config.SetAnnotations(map[string]string{clusterv1.PausedAnnotation: ""})
	config.SetOwnerReferences([]metav1.OwnerReference{ownerRef(machine, clusterv1.GroupVersion.WithKind("Machine"), true)})
	Expect(c.Create(ctx, config)).To(Succeed())

	By("while paused: Paused=True, no bootstrap data")
	eventually(ctx, in, func() error {
		if err := get(ctx, c, config); err != nil {
			return err
		}
		return CheckPaused(config, true)
	}, "a paused config reports Paused=True")
	consistently(ctx, in, func() error {
		if err := get(ctx, c, config); err != nil {
			return err
		}
		return CheckNotInitialized(config, "status", "initialization", "dataSecretCreated")
	}, "a paused config produces no bootstrap data")

	By("unpausing")
	setAnnotation(ctx, c, config, clusterv1.PausedAnnotation, nil)
	eventually(ctx, in, func() error {
		if err := get(ctx, c, config); err != nil {
			return err
		}
		return CheckPaused(config, false)
	}, "an unpaused config reports Paused=False")
	if input.Prepare != nil {
		Expect(input.Prepare(ctx, PrepareInput{Cluster: cluster, Machine: machine, Config: config})).To(Succeed(), "preparing the provider")
	}

	By("checking the bootstrap data")
	VerifyBootstrapData(ctx, VerifyBootstrapDataInput{Client: c, Config: config, ClusterName: cluster.Name, Intervals: in})
}

// VerifyBootstrapDataInput says which config to check.
type VerifyBootstrapDataInput struct {
	Client      client.Client
	Config      *unstructured.Unstructured
	ClusterName string
	Intervals   Intervals
}

// VerifyBootstrapData waits for the config's bootstrap data and checks it
// against the contract, then its conditions.
func VerifyBootstrapData(ctx context.Context, input VerifyBootstrapDataInput) {
	GinkgoHelper()
	in := input.Intervals.withDefaults()
	eventually(ctx, in, func() error {
		if err := get(ctx, input.Client, input.Config); err != nil {
			return err
		}
		return CheckBootstrapData(ctx, input.Client, input.Config, input.ClusterName)
	}, fmt.Sprintf("%s should provide its bootstrap data as the contract says", describe(input.Config)))
	Expect(CheckConditions(input.Config)).To(Succeed())
}
