package webhooks_test

import (
	"context"
	"strings"
	"testing"

	. "github.com/onsi/gomega"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	capiagentv1 "github.com/paritylab/paritylab/providers/agent/api/v1beta1"
)

// invalidSelectors are Agent label selectors the API server must refuse,
// with the words the message must contain: the field and what to fix.
var invalidSelectors = []struct {
	name     string
	selector *metav1.LabelSelector
	message  []string
}{
	{"label key with a space", &metav1.LabelSelector{MatchLabels: map[string]string{"bad key": "x"}},
		[]string{"agentLabelSelector.matchLabels", "matchLabels of valid label keys and values"}},
	{"label value too long", &metav1.LabelSelector{MatchLabels: map[string]string{"pool": strings.Repeat("a", 64)}},
		[]string{"agentLabelSelector.matchLabels", "agentLabelSelector picks the Agents"}},
	{"unknown operator", &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "pool", Operator: "Equals", Values: []string{"a"}}}},
		[]string{"agentLabelSelector.matchExpressions[0].operator", "In or NotIn"}},
	{"In without values", &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "pool", Operator: metav1.LabelSelectorOpIn}}},
		[]string{"agentLabelSelector.matchExpressions[0].values", "Exists or DoesNotExist and no values"}},
	{"Exists with values", &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "pool", Operator: metav1.LabelSelectorOpExists, Values: []string{"a"}}}},
		[]string{"agentLabelSelector.matchExpressions[0].values"}},
}

// validSelector is what HyperShift writes from a NodePool, plus an
// expression.
func validSelector() *metav1.LabelSelector {
	return &metav1.LabelSelector{
		MatchLabels:      map[string]string{"infraenvs.agent-install.openshift.io": "hosted"},
		MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "rack", Operator: metav1.LabelSelectorOpNotIn, Values: []string{"r9"}}},
	}
}

func TestAgentMachineSelectorRejected(t *testing.T) {
	ns := env.Namespace(t)
	for _, tc := range invalidSelectors {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			am := &capiagentv1.AgentMachine{ObjectMeta: metav1.ObjectMeta{GenerateName: "am-", Namespace: ns},
				Spec: capiagentv1.AgentMachineSpec{AgentLabelSelector: tc.selector}}
			err := env.Client.Create(context.Background(), am)
			g.Expect(apierrors.IsInvalid(err)).To(BeTrue(), "want Invalid, got %v", err)
			g.Expect(err.Error()).To(ContainSubstring("spec.agentLabelSelector"))
			for _, m := range tc.message {
				g.Expect(err.Error()).To(ContainSubstring(m))
			}
		})
	}
}

func TestAgentMachineTemplateSelectorRejected(t *testing.T) {
	ns := env.Namespace(t)
	for _, tc := range invalidSelectors {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			err := env.Client.Create(context.Background(), template(ns, "", tc.selector))
			g.Expect(apierrors.IsInvalid(err)).To(BeTrue(), "want Invalid, got %v", err)
			g.Expect(err.Error()).To(ContainSubstring("spec.template.spec.agentLabelSelector"))
			for _, m := range tc.message {
				g.Expect(err.Error()).To(ContainSubstring(m))
			}
		})
	}
}

func TestAgentMachineValidSelectorAccepted(t *testing.T) {
	g := NewWithT(t)
	ns := env.Namespace(t)
	for _, sel := range []*metav1.LabelSelector{nil, {}, validSelector()} {
		am := &capiagentv1.AgentMachine{ObjectMeta: metav1.ObjectMeta{GenerateName: "am-", Namespace: ns},
			Spec: capiagentv1.AgentMachineSpec{AgentLabelSelector: sel}}
		g.Expect(env.Client.Create(context.Background(), am)).To(Succeed(), "selector %v", sel)
	}
	am := &capiagentv1.AgentMachine{ObjectMeta: metav1.ObjectMeta{Name: "changes", Namespace: ns},
		Spec: capiagentv1.AgentMachineSpec{AgentLabelSelector: validSelector()}}
	g.Expect(env.Client.Create(context.Background(), am)).To(Succeed())
	am.Labels = map[string]string{"team": "metal"}
	g.Expect(env.Client.Update(context.Background(), am)).To(Succeed(), "metadata may change")
	am.Spec.AgentLabelSelector.MatchLabels["bad key"] = "x"
	err := env.Client.Update(context.Background(), am)
	g.Expect(apierrors.IsInvalid(err)).To(BeTrue(), "a changed selector is checked again, got %v", err)
}

func TestAgentMachineTemplateSpecImmutable(t *testing.T) {
	ns := env.Namespace(t)
	cases := []struct {
		name    string
		change  func(t *capiagentv1.AgentMachineTemplate)
		allowed bool
		field   string
	}{
		{name: "selector label", field: "spec.template.spec.agentLabelSelector.matchLabels.rack",
			change: func(t *capiagentv1.AgentMachineTemplate) {
				t.Spec.Template.Spec.AgentLabelSelector.MatchLabels["rack"] = "r1"
			}},
		{name: "selector removed", field: "spec.template.spec.agentLabelSelector",
			change: func(t *capiagentv1.AgentMachineTemplate) { t.Spec.Template.Spec.AgentLabelSelector = nil }},
		{name: "provider ID", field: "spec.template.spec.providerID",
			change: func(t *capiagentv1.AgentMachineTemplate) { id := "agent://x"; t.Spec.Template.Spec.ProviderID = &id }},
		{name: "labels and annotations", allowed: true, change: func(t *capiagentv1.AgentMachineTemplate) {
			t.Labels = map[string]string{"team": "metal"}
			t.Annotations = map[string]string{"note": "x"}
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			tpl := template(ns, "", validSelector())
			g.Expect(env.Client.Create(context.Background(), tpl)).To(Succeed())
			tc.change(tpl)
			err := env.Client.Update(context.Background(), tpl)
			if tc.allowed {
				g.Expect(err).NotTo(HaveOccurred())
				return
			}
			g.Expect(apierrors.IsInvalid(err)).To(BeTrue(), "want Invalid, got %v", err)
			g.Expect(err.Error()).To(ContainSubstring(tc.field + ": Forbidden: the spec of an AgentMachineTemplate is immutable"))
			g.Expect(err.Error()).To(ContainSubstring("as Cluster API requires of infrastructure machine templates"))
			g.Expect(err.Error()).To(ContainSubstring("create a new AgentMachineTemplate"), "the message says what to do instead")
		})
	}
}

func template(ns, name string, sel *metav1.LabelSelector) *capiagentv1.AgentMachineTemplate {
	return &capiagentv1.AgentMachineTemplate{
		ObjectMeta: metav1.ObjectMeta{Name: name, GenerateName: "t-", Namespace: ns},
		Spec: capiagentv1.AgentMachineTemplateSpec{Template: capiagentv1.AgentMachineTemplateResource{
			Spec: capiagentv1.AgentMachineSpec{AgentLabelSelector: sel},
		}},
	}
}

func TestAgentClusterIgnitionURL(t *testing.T) {
	ns := env.Namespace(t)
	cases := []struct {
		url   string
		valid bool
	}{
		{url: "", valid: true},
		{url: "https://ignition-server-clusters-hosted.apps.example.com/ignition", valid: true},
		{url: "http://192.0.2.10:22624/config/worker", valid: true},
		{url: "https://[2001:db8::1]:443/ignition", valid: true},
		{url: "ignition.example.com/ignition"},
		{url: "/ignition"},
		{url: "ftp://ignition.example.com/ignition"},
		{url: "https:///ignition"},
		{url: "https:ignition.example.com"},
		{url: "https://ignition example.com/"},
	}
	for _, tc := range cases {
		t.Run(tc.url, func(t *testing.T) {
			g := NewWithT(t)
			ac := agentCluster(ns, "")
			ac.Spec.IgnitionEndpoint = &capiagentv1.IgnitionEndpoint{Url: tc.url}
			err := env.Client.Create(context.Background(), ac)
			if tc.valid {
				g.Expect(err).NotTo(HaveOccurred())
				return
			}
			g.Expect(apierrors.IsInvalid(err)).To(BeTrue(), "want Invalid, got %v", err)
			g.Expect(err.Error()).To(ContainSubstring("spec.ignitionEndpoint.url"))
			g.Expect(err.Error()).To(ContainSubstring("must be an absolute http or https URL of the Ignition server"))
		})
	}
}

func TestAgentClusterIgnitionURLCheckedOnChange(t *testing.T) {
	g := NewWithT(t)
	ns := env.Namespace(t)
	ac := agentCluster(ns, "hosted")
	g.Expect(env.Client.Create(context.Background(), ac)).To(Succeed(), "no Ignition endpoint")
	ac.Spec.IgnitionEndpoint = &capiagentv1.IgnitionEndpoint{Url: "https://ignition.example.com/ignition"}
	g.Expect(env.Client.Update(context.Background(), ac)).To(Succeed())
	ac.Spec.IgnitionEndpoint.Url = "ignition.example.com"
	g.Expect(env.Client.Update(context.Background(), ac)).To(MatchError(ContainSubstring("spec.ignitionEndpoint.url")))
}

// agentCluster is an AgentCluster whose control plane endpoint is set, as
// HyperShift creates it.
func agentCluster(ns, name string) *capiagentv1.AgentCluster {
	return &capiagentv1.AgentCluster{
		ObjectMeta: metav1.ObjectMeta{Name: name, GenerateName: "ac-", Namespace: ns},
		Spec:       capiagentv1.AgentClusterSpec{ControlPlaneEndpoint: clusterv1.APIEndpoint{Host: "api.hosted.example.com", Port: 6443}},
	}
}
