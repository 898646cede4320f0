package conformance_test

import (
	"context"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/paritylab/paritylab/lab/controllers"
	"github.com/paritylab/paritylab/suites/conformance"
)

// An infrastructure provider that does everything the v1beta2 contract
// asks but one thing: it marks a machine provisioned without spec.providerID.
var (
	brokenClusterGVK = schema.GroupVersionKind{Group: "infrastructure.conformance.paritylab.io", Version: "v1alpha1", Kind: "BrokenCluster"}
	brokenMachineGVK = brokenClusterGVK.GroupVersion().WithKind("BrokenMachine")
)

var _ = Describe("The conformance suite itself, on infrastructure", Label("conformance", "negative"), func() {
	It("fails, naming the rule and the field, for a provider that provisions a machine without spec.providerID", func(ctx SpecContext) {
		input := conformance.InfrastructureProviderSpecInput{
			Client:     shared.client,
			ClusterGVK: brokenClusterGVK,
			MachineGVK: brokenMachineGVK,
			NewCluster: func(string, string) *unstructured.Unstructured {
				return &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{
					"controlPlaneEndpoint": map[string]any{"host": "api.c.example.com", "port": int64(6443)},
				}}}
			},
			NewMachine: func(string, string) *unstructured.Unstructured {
				return &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{}}}
			},
			Intervals: conformance.Intervals{Timeout: 5 * time.Second},
		}
		err := InterceptGomegaFailure(func() { conformance.VerifyInfrastructureProviderLifecycle(ctx, input) })
		Expect(err).To(HaveOccurred(), "the suite must not pass a provider missing a contract field")
		GinkgoWriter.Printf("The suite's failure for the broken provider:\n%s\n", err)
		Expect(err.Error()).To(ContainSubstring("BrokenMachine conformance-infrastructure-"))
		Expect(err.Error()).To(ContainSubstring("spec.providerID is set once the machine is provisioned (contract v1beta2); it is empty"))
	})

	It("fails, naming the rule, for clusterctl manifests without the provider label or the declared contract's label", func() {
		components := []byte("apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: brokenmachines.x\n" +
			"  labels:\n    cluster.x-k8s.io/v1beta1: v1alpha1\n")
		metadata := []byte("releaseSeries:\n- {major: 0, minor: 1, contract: v1beta1}\n- {major: 0, minor: 2, contract: v1beta2}\n")
		contract, err := conformance.CheckComponents(components, metadata, "infrastructure-broken")
		Expect(contract).To(Equal("v1beta2"), "the newest release series names the contract")
		Expect(err).To(MatchError(ContainSubstring(
			`components.yaml CustomResourceDefinition brokenmachines.x: every object is labelled cluster.x-k8s.io/provider=infrastructure-broken (contract v1beta2); the label is ""`)))
		Expect(err).To(MatchError(ContainSubstring(
			"components.yaml CustomResourceDefinition brokenmachines.x: CRDs carry the label cluster.x-k8s.io/v1beta2 of the contract metadata.yaml names (contract v1beta2)")))
	})
})

// newBrokenInfrastructure is the broken infrastructure provider.
func newBrokenInfrastructure() controllers.Component {
	return &brokenProvider{
		name: "broken-infrastructure", crds: "broken-infrastructure.yaml",
		kinds: []schema.GroupVersionKind{brokenClusterGVK, brokenMachineGVK},
		reconciler: func(c client.Client, gvk schema.GroupVersionKind) reconcile.Reconciler {
			return &brokenInfrastructureReconciler{client: c, gvk: gvk}
		},
	}
}

type brokenInfrastructureReconciler struct {
	client client.Client
	gvk    schema.GroupVersionKind
}

// Reconcile reports the pause and, unpaused (and, for a machine, owned by
// a Machine), provisioned; it never sets spec.providerID.
func (r *brokenInfrastructureReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(r.gvk)
	if err := r.client.Get(ctx, req.NamespacedName, u); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	paused, conds := pausedCondition(u)
	owned := r.gvk != brokenMachineGVK || metav1.GetControllerOf(u) != nil
	provisioned := !paused && owned
	if was := conformance.Provisioned(u, "v1beta2"); was == provisioned && sameConditions(u, conds) {
		return ctrl.Result{}, nil
	}
	if err := unstructured.SetNestedSlice(u.Object, conds, "status", "conditions"); err != nil {
		return ctrl.Result{}, err
	}
	if err := unstructured.SetNestedField(u.Object, provisioned, "status", "initialization", "provisioned"); err != nil {
		return ctrl.Result{}, err
	}
	return ctrl.Result{}, r.client.Status().Update(ctx, u)
}
