package crds

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	hypershiftv1beta1 "github.com/openshift/hypershift/api/hypershift/v1beta1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/yaml"
)

// readManifest reads a testdata manifest, strictly decodes it into the
// HyperShift Go type (so the example uses only real fields) and returns
// it as an unstructured object for the API server.
func readManifest(t *testing.T, name string, typed any) *unstructured.Unstructured {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("testdata", "hypershift", name))
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.UnmarshalStrict(raw, typed); err != nil {
		t.Fatalf("%s does not decode strictly into %T: %v", name, typed, err)
	}
	u := &unstructured.Unstructured{}
	if err := yaml.Unmarshal(raw, &u.Object); err != nil {
		t.Fatal(err)
	}
	return u
}

// The HyperShift sets install on a real API server, which then accepts an
// agent HostedCluster and NodePool, refuses an agent platform without its
// agent namespace, and scales a NodePool through its scale subresource.
func TestHyperShiftCRDsServeAgentHostedClusters(t *testing.T) {
	env := &envtest.Environment{}
	cfg, err := env.Start()
	if err != nil {
		t.Fatalf("start API server: %v", err)
	}
	t.Cleanup(func() {
		if err := env.Stop(); err != nil {
			t.Errorf("stop API server: %v", err)
		}
	})
	if err := Install(cfg, InstallInput{Sets: []Set{HyperShift(), HostedControlPlane()}}); err != nil {
		t.Fatal(err)
	}
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{clientgoscheme.AddToScheme, apiextensionsv1.AddToScheme, hypershiftv1beta1.AddToScheme} {
		if err := add(scheme); err != nil {
			t.Fatal(err)
		}
	}
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()

	hcp := &apiextensionsv1.CustomResourceDefinition{}
	if err := c.Get(ctx, client.ObjectKey{Name: "hostedcontrolplanes.hypershift.openshift.io"}, hcp); err != nil {
		t.Fatal(err)
	}
	if hcp.Labels[ContractLabelV1Beta1] != "v1beta1" {
		t.Errorf("installed HostedControlPlane CRD labels %v, want %s=v1beta1", hcp.Labels, ContractLabelV1Beta1)
	}

	if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "clusters"}}); err != nil {
		t.Fatal(err)
	}
	hc := readManifest(t, "hostedcluster-agent.yaml", &hypershiftv1beta1.HostedCluster{})
	bad := hc.DeepCopy()
	bad.SetName("no-agent-namespace")
	unstructured.RemoveNestedField(bad.Object, "spec", "platform", "agent", "agentNamespace")
	if err := c.Create(ctx, bad); err == nil || !strings.Contains(err.Error(), "agentNamespace") {
		t.Errorf("an agent platform without agentNamespace: %v, want a refusal naming the field", err)
	}
	if err := c.Create(ctx, hc); err != nil {
		t.Fatalf("create the agent HostedCluster: %v", err)
	}
	np := readManifest(t, "nodepool-agent.yaml", &hypershiftv1beta1.NodePool{})
	if err := c.Create(ctx, np); err != nil {
		t.Fatalf("create the agent NodePool: %v", err)
	}

	// The scale subresource takes a typed object.
	typed := &hypershiftv1beta1.NodePool{ObjectMeta: metav1.ObjectMeta{Name: np.GetName(), Namespace: np.GetNamespace()}}
	scale := &autoscalingv1.Scale{}
	if err := c.SubResource("scale").Get(ctx, typed, scale); err != nil {
		t.Fatalf("get the NodePool's scale: %v", err)
	}
	scale.Spec.Replicas = 2
	if err := c.SubResource("scale").Update(ctx, typed, client.WithSubResourceBody(scale)); err != nil {
		t.Fatalf("scale the NodePool: %v", err)
	}
	got := &hypershiftv1beta1.NodePool{}
	if err := c.Get(ctx, client.ObjectKeyFromObject(np), got); err != nil {
		t.Fatal(err)
	}
	if got.Spec.Replicas == nil || *got.Spec.Replicas != 2 {
		t.Errorf("NodePool replicas %v after scaling to 2", got.Spec.Replicas)
	}
	if sel := got.Spec.Platform.Agent.AgentLabelSelector; sel == nil || sel.MatchLabels["pool"] != "np1" {
		t.Errorf("NodePool agentLabelSelector %v, want pool=np1 kept", sel)
	}
}
