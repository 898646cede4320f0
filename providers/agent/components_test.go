package agent_test

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"os"
	"slices"
	"testing"

	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"
)

// components.yaml is what clusterctl installs: the three CRDs with
// upstream's names and the v1beta1 contract label (HyperShift's), every
// object labelled with the provider, and the webhooks served by the
// provider's own Service. metadata.yaml maps the release series to the
// v1beta1 contract.
func TestComponents(t *testing.T) {
	raw, err := os.ReadFile("components.yaml")
	if err != nil {
		t.Fatal(err)
	}
	type object struct {
		Kind     string
		Metadata struct {
			Name, Namespace string
			Labels          map[string]string
		}
		Webhooks []struct {
			ClientConfig struct {
				Service struct{ Name, Namespace string }
			} `json:"clientConfig"`
		}
	}
	var crds []string
	webhooks := 0
	r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(raw)))
	for {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		var o object
		if err := yaml.Unmarshal(doc, &o); err != nil {
			t.Fatal(err)
		}
		if o.Kind == "" {
			continue
		}
		if got := o.Metadata.Labels["cluster.x-k8s.io/provider"]; got != "infrastructure-agent" {
			t.Errorf("%s %s: provider label %q", o.Kind, o.Metadata.Name, got)
		}
		switch o.Kind {
		case "CustomResourceDefinition":
			crds = append(crds, o.Metadata.Name)
			if got := o.Metadata.Labels["cluster.x-k8s.io/v1beta1"]; got != "v1beta1" {
				t.Errorf("CRD %s: contract label cluster.x-k8s.io/v1beta1=%q, want v1beta1", o.Metadata.Name, got)
			}
		case "ValidatingWebhookConfiguration":
			for _, w := range o.Webhooks {
				webhooks++
				if s := w.ClientConfig.Service; s.Name != "capi-agent-webhook-service" || s.Namespace != "capi-agent-system" {
					t.Errorf("webhook served by %s/%s", s.Namespace, s.Name)
				}
			}
		case "Namespace":
		default:
			if o.Metadata.Namespace != "" && o.Metadata.Namespace != "capi-agent-system" {
				t.Errorf("%s %s in namespace %s", o.Kind, o.Metadata.Name, o.Metadata.Namespace)
			}
		}
	}
	want := []string{
		"agentclusters.capi-provider.agent-install.openshift.io",
		"agentmachines.capi-provider.agent-install.openshift.io",
		"agentmachinetemplates.capi-provider.agent-install.openshift.io",
	}
	if !slices.Equal(crds, want) {
		t.Errorf("CRDs %v, want %v", crds, want)
	}
	if webhooks != 3 {
		t.Errorf("%d webhooks, want 3 (AgentCluster, AgentMachine, AgentMachineTemplate)", webhooks)
	}
	meta, err := os.ReadFile("metadata.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(meta, []byte("contract: v1beta1\n")) || bytes.Contains(meta, []byte("contract: v1beta2")) {
		t.Errorf("metadata.yaml does not map to the v1beta1 contract:\n%s", meta)
	}
}
