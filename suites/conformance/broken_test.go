package conformance_test

import (
	"context"
	"os"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	"github.com/paritylab/paritylab/lab/controllers"
	"github.com/paritylab/paritylab/lab/crds"
	"github.com/paritylab/paritylab/suites/conformance"
)

// brokenGVK is a bootstrap provider that does everything the contract asks
// but one thing: it never sets status.initialization.dataSecretCreated.
var brokenGVK = schema.GroupVersionKind{Group: "bootstrap.conformance.paritylab.io", Version: "v1alpha1", Kind: "BrokenConfig"}

var _ = Describe("The conformance suite itself", Label("conformance", "negative"), func() {
	It("fails, naming the rule and the field, for a provider that leaves out status.initialization.dataSecretCreated", func(ctx SpecContext) {
		input := conformance.BootstrapProviderSpecInput{
			Client:    shared.client,
			ConfigGVK: brokenGVK,
			NewConfig: func(string, string) *unstructured.Unstructured {
				return &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{}}}
			},
			Intervals: conformance.Intervals{Timeout: 5 * time.Second},
		}
		err := InterceptGomegaFailure(func() { conformance.VerifyBootstrapProviderLifecycle(ctx, input) })
		Expect(err).To(HaveOccurred(), "the suite must not pass a provider missing a contract field")
		GinkgoWriter.Printf("The suite's failure for the broken provider:\n%s\n", err)
		Expect(err.Error()).To(ContainSubstring("BrokenConfig conformance-bootstrap-"))
		Expect(err.Error()).To(ContainSubstring(
			"status.initialization.dataSecretCreated is set true once the bootstrap data Secret exists (contract v1beta2); it is not set"))
	})

	It("fails, naming the rule, for a control-plane CRD without the scale subresource", func(ctx SpecContext) {
		crd, err := conformance.CheckCRD(ctx, shared.client, brokenGVK)
		Expect(err).NotTo(HaveOccurred())
		err = conformance.CheckScaleSubresource(crd, brokenGVK.Version)
		Expect(err).To(MatchError(
			"CRD brokenconfigs.bootstrap.conformance.paritylab.io: a control plane with replicas has a scale subresource (contract v1beta2); there is none"))
	})
})

// brokenProvider runs a deliberately broken provider in the lab's
// controller host: its CRDs from testdata, and a controller of each kind,
// read unstructured.
type brokenProvider struct {
	name, crds string
	kinds      []schema.GroupVersionKind
	reconciler func(c client.Client, gvk schema.GroupVersionKind) reconcile.Reconciler
}

var _ controllers.Component = (*brokenProvider)(nil)

func (b *brokenProvider) Name() string                    { return b.name }
func (*brokenProvider) AddToScheme(*runtime.Scheme) error { return nil }
func (b *brokenProvider) CRDs() []crds.Set {
	return []crds.Set{{Name: b.name + " provider", FS: os.DirFS("testdata"), Files: []string{b.crds}}}
}
func (*brokenProvider) Webhooks() (*controllers.WebhookConfigurations, error) { return nil, nil }
func (*brokenProvider) WebhooksReady(context.Context, client.Client) error    { return nil }

func (b *brokenProvider) SetupWithManager(_ context.Context, mgr ctrl.Manager) error {
	for _, gvk := range b.kinds {
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(gvk)
		r := b.reconciler(mgr.GetClient(), gvk)
		if err := ctrl.NewControllerManagedBy(mgr).For(u).Named("broken-" + strings.ToLower(gvk.Kind)).Complete(r); err != nil {
			return err
		}
	}
	return nil
}

// newBrokenBootstrap is the broken bootstrap provider.
func newBrokenBootstrap() controllers.Component {
	return &brokenProvider{
		name: "broken-bootstrap", crds: "broken-bootstrap.yaml", kinds: []schema.GroupVersionKind{brokenGVK},
		reconciler: func(c client.Client, _ schema.GroupVersionKind) reconcile.Reconciler {
			return &brokenBootstrap{client: c}
		},
	}
}

// brokenBootstrap reconciles BrokenConfigs.
type brokenBootstrap struct{ client client.Client }

// Reconcile pauses and writes the data Secret and its name correctly, and
// forgets the initialization flag.
func (b *brokenBootstrap) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(brokenGVK)
	if err := b.client.Get(ctx, req.NamespacedName, u); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	paused, conds := pausedCondition(u)
	owner := metav1.GetControllerOf(u)
	if !paused && owner != nil && owner.Kind == "Machine" {
		m := &clusterv1.Machine{}
		if err := b.client.Get(ctx, client.ObjectKey{Namespace: u.GetNamespace(), Name: owner.Name}, m); err != nil {
			return ctrl.Result{}, client.IgnoreNotFound(err)
		}
		secret := &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{
				Name: u.GetName(), Namespace: u.GetNamespace(),
				Labels:          map[string]string{clusterv1.ClusterNameLabel: m.Spec.ClusterName},
				OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(u, brokenGVK)},
			},
			Type: clusterv1.ClusterSecretType,
			Data: map[string][]byte{"value": []byte("#cloud-config\n"), "format": []byte("cloud-config")},
		}
		if err := b.client.Create(ctx, secret); err != nil && !apierrors.IsAlreadyExists(err) {
			return ctrl.Result{}, err
		}
		if err := unstructured.SetNestedField(u.Object, secret.Name, "status", "dataSecretName"); err != nil {
			return ctrl.Result{}, err
		}
		conds = append(conds, condition("Ready", metav1.ConditionTrue, "DataSecretAvailable"))
		// The contract's status.initialization.dataSecretCreated: left out.
	}
	if sameConditions(u, conds) {
		return ctrl.Result{}, nil
	}
	if err := unstructured.SetNestedSlice(u.Object, conds, "status", "conditions"); err != nil {
		return ctrl.Result{}, err
	}
	return ctrl.Result{}, b.client.Status().Update(ctx, u)
}

// pausedCondition says whether u is paused and returns its Paused
// condition, which the broken providers get right.
func pausedCondition(u *unstructured.Unstructured) (bool, []any) {
	_, paused := u.GetAnnotations()[clusterv1.PausedAnnotation]
	status := metav1.ConditionFalse
	if paused {
		status = metav1.ConditionTrue
	}
	return paused, []any{condition(clusterv1.PausedCondition, status, "Broken")}
}

func condition(typ string, status metav1.ConditionStatus, reason string) map[string]any {
	return map[string]any{
		"type": typ, "status": string(status), "reason": reason,
		"lastTransitionTime": metav1.Now().UTC().Format(time.RFC3339), "message": "",
	}
}

// sameConditions says whether u already has conds (by type and status):
// the broken provider is careless, not a hot loop.
func sameConditions(u *unstructured.Unstructured, conds []any) bool {
	old, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	if len(old) != len(conds) {
		return false
	}
	for i := range old {
		o, _ := old[i].(map[string]any)
		n, _ := conds[i].(map[string]any)
		if o["type"] != n["type"] || o["status"] != n["status"] {
			return false
		}
	}
	return true
}
