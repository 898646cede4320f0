package config

import (
	"bufio"
	"bytes"
	"embed"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"sort"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"

	agentconfig "github.com/paritylab/paritylab/providers/agent/config"
	bootstrapconfig "github.com/paritylab/paritylab/providers/bootstrap/config"
	controlplaneconfig "github.com/paritylab/paritylab/providers/controlplane/config"
)

//go:embed assisted/*.yaml
var assisted embed.FS

// Manifests are the manifests of one API in a file system.
type Manifests struct {
	// Name says what the manifests are, for errors.
	Name string
	// FS holds the files.
	FS fs.FS
	// CRDs are glob patterns (path.Match syntax) of the CRD files in FS.
	CRDs []string
	// Webhooks is the webhook configuration file in FS; empty for none.
	Webhooks string
}

// Bootstrap is the bootstrap provider (OpenshiftAssistedConfig and its
// template).
func Bootstrap() Manifests {
	return Manifests{
		Name:     "bootstrap provider",
		FS:       bootstrapconfig.FS,
		CRDs:     []string{bootstrapconfig.CRDs},
		Webhooks: bootstrapconfig.Webhooks,
	}
}

// ControlPlane is the control-plane provider
// (OpenshiftAssistedControlPlane).
func ControlPlane() Manifests {
	return Manifests{
		Name:     "control-plane provider",
		FS:       controlplaneconfig.FS,
		CRDs:     []string{controlplaneconfig.CRDs},
		Webhooks: controlplaneconfig.Webhooks,
	}
}

// Agent is the agent infrastructure provider (AgentCluster, AgentMachine
// and AgentMachineTemplate).
func Agent() Manifests {
	return Manifests{
		Name:     "agent infrastructure provider",
		FS:       agentconfig.FS,
		CRDs:     []string{agentconfig.CRDs},
		Webhooks: agentconfig.Webhooks,
	}
}

// Assisted is the assisted-service API: InfraEnv, Agent, NMStateConfig
// (agent-install.openshift.io) and AgentClusterInstall
// (extensions.hive.openshift.io).
func Assisted() Manifests {
	return Manifests{
		Name: "assisted service",
		FS:   assisted,
		CRDs: []string{"assisted/agent-install.openshift.io_*.yaml", "assisted/extensions.hive.openshift.io_*.yaml"},
	}
}

// LoadCRDs decodes every CRD, sorted by name.
func (m Manifests) LoadCRDs() ([]*apiextensionsv1.CustomResourceDefinition, error) {
	var out []*apiextensionsv1.CustomResourceDefinition
	for _, pattern := range m.CRDs {
		files, err := fs.Glob(m.FS, pattern)
		if err != nil {
			return nil, fmt.Errorf("%s: bad pattern %q: %w", m.Name, pattern, err)
		}
		if len(files) == 0 {
			return nil, fmt.Errorf("%s: no CRD file matches %q", m.Name, pattern)
		}
		for _, f := range files {
			err := eachDocument(m.FS, f, func(kind string, doc []byte) error {
				if kind != "CustomResourceDefinition" {
					return nil
				}
				crd := &apiextensionsv1.CustomResourceDefinition{}
				if err := yaml.UnmarshalStrict(doc, crd); err != nil {
					return fmt.Errorf("decode CRD: %w", err)
				}
				out = append(out, crd)
				return nil
			})
			if err != nil {
				return nil, fmt.Errorf("%s: %w", m.Name, err)
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// Webhooks are admission webhook configurations.
type Webhooks struct {
	Mutating   []*admissionregistrationv1.MutatingWebhookConfiguration
	Validating []*admissionregistrationv1.ValidatingWebhookConfiguration
}

// LoadWebhooks decodes the webhook configurations, as generated for an
// in-cluster Service.
func (m Manifests) LoadWebhooks() (*Webhooks, error) {
	out := &Webhooks{}
	if m.Webhooks == "" {
		return out, nil
	}
	err := eachDocument(m.FS, m.Webhooks, func(kind string, doc []byte) error {
		switch kind {
		case "MutatingWebhookConfiguration":
			c := &admissionregistrationv1.MutatingWebhookConfiguration{}
			if err := yaml.UnmarshalStrict(doc, c); err != nil {
				return fmt.Errorf("decode mutating webhook configuration: %w", err)
			}
			out.Mutating = append(out.Mutating, c)
		case "ValidatingWebhookConfiguration":
			c := &admissionregistrationv1.ValidatingWebhookConfiguration{}
			if err := yaml.UnmarshalStrict(doc, c); err != nil {
				return fmt.Errorf("decode validating webhook configuration: %w", err)
			}
			out.Validating = append(out.Validating, c)
		case "":
		default:
			return fmt.Errorf("unexpected kind %q among webhook configurations", kind)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", m.Name, err)
	}
	return out, nil
}

// eachDocument calls fn with the kind and bytes of every non-empty document
// of a multi-document YAML file.
func eachDocument(fsys fs.FS, name string, fn func(kind string, doc []byte) error) error {
	raw, err := fs.ReadFile(fsys, name)
	if err != nil {
		return fmt.Errorf("read %s: %w", name, err)
	}
	reader := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(raw)))
	for {
		doc, err := reader.Read()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("split %s: %w", name, err)
		}
		if len(bytes.TrimSpace(doc)) == 0 {
			continue
		}
		var meta struct{ Kind string }
		if err := yaml.Unmarshal(doc, &meta); err != nil {
			return fmt.Errorf("decode %s: %w", path.Base(name), err)
		}
		if err := fn(meta.Kind, doc); err != nil {
			return fmt.Errorf("%s: %w", path.Base(name), err)
		}
	}
}
