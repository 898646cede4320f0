package hypershift

import (
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"

	hypershiftv1beta1 "github.com/openshift/hypershift/api/hypershift/v1beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	clusterv1beta1 "sigs.k8s.io/cluster-api/api/core/v1beta1"

	"github.com/paritylab/paritylab/lab/assisted/agentapi"
)

func testNodePool(selector map[string]string) *hypershiftv1beta1.NodePool {
	np := &hypershiftv1beta1.NodePool{
		ObjectMeta: metav1.ObjectMeta{Namespace: "clusters", Name: "np1"},
		Spec: hypershiftv1beta1.NodePoolSpec{
			ClusterName: "hc1", Replicas: ptr.To[int32](2),
			Management: hypershiftv1beta1.NodePoolManagement{UpgradeType: hypershiftv1beta1.UpgradeTypeInPlace},
			Platform:   hypershiftv1beta1.NodePoolPlatform{Type: hypershiftv1beta1.AgentPlatform, Agent: &hypershiftv1beta1.AgentNodePoolPlatform{}},
		},
	}
	if selector != nil {
		np.Spec.Platform.Agent.AgentLabelSelector = &metav1.LabelSelector{MatchLabels: selector}
	}
	return np
}

func testInput(np *hypershiftv1beta1.NodePool) NodePoolObjectsInput {
	return NodePoolObjectsInput{
		NodePool: np, ControlPlaneNamespace: "clusters-hc1", InfraID: "hc1-x7k2p",
		ReleaseImage: "registry.lab:5000/ocp/release@sha256:abc", ReleaseVersion: "4.21.0", PullSecretName: "pull-secret",
		IgnitionEndpoint: "10.0.2.2:41234", IgnitionCA: []byte("CA PEM"), Token: "7c9e6679-7425-40de-944b-e07fc1f90ae7",
	}
}

// HyperShift names a NodePool's template by the hash of its spec's JSON
// printed as a byte list: for an empty selector, 52df983b (computed with
// HyperShift's own HashSimple).
func TestAgentMachineTemplateNamedByItsSpec(t *testing.T) {
	empty, err := AgentMachineTemplate(testInput(testNodePool(nil)))
	if err != nil {
		t.Fatal(err)
	}
	if empty.Name != "np1-52df983b" || empty.Namespace != "clusters-hc1" || empty.Annotations[NodePoolAnnotation] != "clusters/np1" {
		t.Errorf("template %s/%s annotations %v; want clusters-hc1/np1-52df983b for clusters/np1", empty.Namespace, empty.Name, empty.Annotations)
	}
	selected, err := AgentMachineTemplate(testInput(testNodePool(map[string]string{"pool": "np1"})))
	if err != nil {
		t.Fatal(err)
	}
	if selected.Name == empty.Name || !strings.HasPrefix(selected.Name, "np1-") || len(selected.Name) != len("np1-")+8 {
		t.Errorf("template with a selector named %q (without: %q)", selected.Name, empty.Name)
	}
	if sel := selected.Spec.Template.Spec.AgentLabelSelector; sel == nil || sel.MatchLabels["pool"] != "np1" {
		t.Errorf("template selector %v, want pool=np1", sel)
	}
}

func TestBoundedName(t *testing.T) {
	cases := []struct{ base, suffix string }{
		{"hc1-x7k2p-hc1", "np1"},
		{strings.Repeat("b", 40), "np1"},
		{"base", strings.Repeat("s", 40)},
	}
	for _, c := range cases {
		got := boundedName(c.base, c.suffix, 43)
		if len(got) > 43 {
			t.Errorf("boundedName(%q, %q) = %q, longer than 43", c.base, c.suffix, got)
		}
		if joined := c.base + "-" + c.suffix; len(joined) <= 43 && got != joined {
			t.Errorf("boundedName(%q, %q) = %q, want %q", c.base, c.suffix, got, joined)
		}
	}
	long := boundedName(strings.Repeat("b", 40), "np1", 43)
	if want := strings.Repeat("b", 30) + "-" + hashSimple(strings.Repeat("b", 40)) + "-np1"; long != want {
		t.Errorf("long base: %q, want %q", long, want)
	}
}

func TestMachineDeploymentOfNodePool(t *testing.T) {
	in := testInput(testNodePool(map[string]string{"pool": "np1"}))
	tmpl, err := AgentMachineTemplate(in)
	if err != nil {
		t.Fatal(err)
	}
	md := MachineDeployment(in, tmpl)
	sel := "hc1-x7k2p-hc1-np1"
	if md.Name != "np1" || md.Namespace != "clusters-hc1" || md.Spec.ClusterName != "hc1-x7k2p" || *md.Spec.Replicas != 2 {
		t.Errorf("MachineDeployment %s/%s cluster %s replicas %d", md.Namespace, md.Name, md.Spec.ClusterName, *md.Spec.Replicas)
	}
	if md.Labels[clusterv1beta1.ClusterNameLabel] != "hc1-x7k2p" || md.Annotations[NodePoolAnnotation] != "clusters/np1" ||
		md.Annotations[clusterv1beta1.AutoscalerMinSizeAnnotation] != "0" || md.Annotations[clusterv1beta1.AutoscalerMaxSizeAnnotation] != "0" {
		t.Errorf("MachineDeployment labels %v annotations %v", md.Labels, md.Annotations)
	}
	for what, labels := range map[string]map[string]string{"selector": md.Spec.Selector.MatchLabels, "template": md.Spec.Template.Labels} {
		if len(labels) != 2 || labels[sel] != sel || labels[clusterv1beta1.ClusterNameLabel] != "hc1-x7k2p" {
			t.Errorf("%s labels %v, want %s=%s and the cluster name", what, labels, sel, sel)
		}
	}
	ts := md.Spec.Template
	if ts.Annotations[NodePoolAnnotation] != "clusters/np1" || ts.Annotations[ReleaseVersionAnnotation] != "4.21.0" ||
		*ts.Spec.Version != "4.21.0" || *ts.Spec.Bootstrap.DataSecretName != UserDataSecretName(in) ||
		ts.Spec.InfrastructureRef.Kind != "AgentMachineTemplate" || ts.Spec.InfrastructureRef.Name != tmpl.Name ||
		ts.Spec.InfrastructureRef.APIVersion != "capi-provider.agent-install.openshift.io/v1beta1" {
		t.Errorf("template %+v", ts)
	}
	ru := md.Spec.Strategy.RollingUpdate
	if md.Spec.Strategy.Type != clusterv1beta1.RollingUpdateMachineDeploymentStrategyType || ru.MaxSurge.IntValue() != 1 || ru.MaxUnavailable.IntValue() != 0 {
		t.Errorf("strategy %+v", md.Spec.Strategy)
	}
	in.NodePool.Spec.Management.Replace = &hypershiftv1beta1.ReplaceUpgrade{RollingUpdate: &hypershiftv1beta1.RollingUpdate{MaxUnavailable: ptr.To(intstr.FromInt32(1))}}
	if ru := MachineDeployment(in, tmpl).Spec.Strategy.RollingUpdate; ru.MaxSurge.IntValue() != 1 || ru.MaxUnavailable.IntValue() != 1 {
		t.Errorf("the NodePool's maxUnavailable 1 gave %+v", ru)
	}
}

// The user data points the Machine at the ignition server with the token
// the token Secret holds (base64, as the server decodes it) and the
// config hash that names both Secrets.
func TestTokenAndUserDataSecrets(t *testing.T) {
	in := testInput(testNodePool(nil))
	hash := in.ConfigHash()
	tok := TokenSecret(in)
	if tok.Name != "token-np1-"+hash || tok.Namespace != "clusters-hc1" || string(tok.Data["token"]) != in.Token ||
		tok.Annotations[IgnitionConfigAnnotation] != "true" || tok.Annotations[UpgradeTypeAnnotation] != "InPlace" {
		t.Errorf("token Secret %s: annotations %v data %v", tok.Name, tok.Annotations, tok.Data)
	}
	ud, err := UserDataSecret(in)
	if err != nil {
		t.Fatal(err)
	}
	if ud.Name != "user-data-np1-"+hash || string(ud.Data["disableTemplating"]) != "dHJ1ZQ==" {
		t.Errorf("user data Secret %s disableTemplating %q", ud.Name, ud.Data["disableTemplating"])
	}
	var p agentapi.PointerConfig
	if err := json.Unmarshal(ud.Data["value"], &p); err != nil || len(p.Ignition.Config.Merge) != 1 || p.Ignition.Security == nil {
		t.Fatalf("user data %s: %v", ud.Data["value"], err)
	}
	src := p.Ignition.Config.Merge[0]
	headers := map[string]string{}
	for _, h := range src.HTTPHeaders {
		headers[h.Name] = h.Value
	}
	bearer, _ := strings.CutPrefix(headers["Authorization"], "Bearer ")
	decoded, err := base64.StdEncoding.DecodeString(bearer)
	if src.Source != "https://10.0.2.2:41234/ignition" || err != nil || string(decoded) != in.Token ||
		headers["NodePool"] != "clusters/np1" || headers["TargetConfigVersionHash"] != hash {
		t.Errorf("pointer source %q headers %v", src.Source, headers)
	}
	next := in
	next.ReleaseVersion = "4.21.1"
	if next.ConfigHash() == hash {
		t.Error("another release gives the same config hash")
	}
}

// The stored version stays until the user data changes: a version a
// webhook defaulted is not written back (that would roll every node),
// and a new release's user data carries the new version.
func TestPropagatedTemplate(t *testing.T) {
	built := clusterv1beta1.MachineTemplateSpec{Spec: clusterv1beta1.MachineSpec{
		Version: ptr.To("4.21.0"), Bootstrap: clusterv1beta1.Bootstrap{DataSecretName: ptr.To("user-data-np1-aaaa")}}}
	for _, tc := range []struct {
		name        string
		current     clusterv1beta1.MachineSpec
		wantVersion string
	}{
		{"new", clusterv1beta1.MachineSpec{}, "4.21.0"},
		{"defaulted by a webhook", clusterv1beta1.MachineSpec{Version: ptr.To("v4.21.0"),
			Bootstrap: clusterv1beta1.Bootstrap{DataSecretName: ptr.To("user-data-np1-aaaa")}}, "v4.21.0"},
		{"new user data", clusterv1beta1.MachineSpec{Version: ptr.To("v4.20.0"),
			Bootstrap: clusterv1beta1.Bootstrap{DataSecretName: ptr.To("user-data-np1-bbbb")}}, "4.21.0"},
	} {
		got := propagatedTemplate(tc.current, built)
		if ptr.Deref(got.Spec.Version, "") != tc.wantVersion || ptr.Deref(got.Spec.Bootstrap.DataSecretName, "") != "user-data-np1-aaaa" {
			t.Errorf("%s: version %v, user data %v", tc.name, ptr.Deref(got.Spec.Version, ""), ptr.Deref(got.Spec.Bootstrap.DataSecretName, ""))
		}
	}
}
