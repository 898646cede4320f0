package testenv

import (
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
)

// A minimal infrastructure provider for tests: TestMachineTemplate (whose
// spec.template is cloned) and TestMachine, schemaless, implementing the
// v1beta2 contract in name only.
const (
	InfraGroup   = "infrastructure.cluster.x-k8s.io"
	InfraVersion = "v1alpha1"
)

func infraCRDs() []*apiextensionsv1.CustomResourceDefinition {
	return []*apiextensionsv1.CustomResourceDefinition{infraCRD("TestMachine"), infraCRD("TestMachineTemplate")}
}

func infraCRD(kind string) *apiextensionsv1.CustomResourceDefinition {
	plural := lower(kind) + "s"
	open := &apiextensionsv1.JSONSchemaProps{Type: "object", XPreserveUnknownFields: ptr.To(true)}
	return &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{
			Name:   plural + "." + InfraGroup,
			Labels: map[string]string{"cluster.x-k8s.io/v1beta2": InfraVersion},
		},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: InfraGroup,
			Names: apiextensionsv1.CustomResourceDefinitionNames{Kind: kind, ListKind: kind + "List", Plural: plural, Singular: lower(kind)},
			Scope: apiextensionsv1.NamespaceScoped,
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{
				Name: InfraVersion, Served: true, Storage: true,
				Subresources: &apiextensionsv1.CustomResourceSubresources{Status: &apiextensionsv1.CustomResourceSubresourceStatus{}},
				Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
					Type:       "object",
					Properties: map[string]apiextensionsv1.JSONSchemaProps{"spec": *open, "status": *open},
				}},
			}},
		},
	}
}

func lower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}

// InfraMachineTemplate creates a TestMachineTemplate whose template spec is
// spec.
func (e *Environment) InfraMachineTemplate(t testing.TB, namespace, name string, spec map[string]any) *unstructured.Unstructured {
	t.Helper()
	u := &unstructured.Unstructured{Object: map[string]any{
		"spec": map[string]any{"template": map[string]any{"spec": spec}},
	}}
	u.SetAPIVersion(InfraGroup + "/" + InfraVersion)
	u.SetKind("TestMachineTemplate")
	u.SetNamespace(namespace)
	u.SetName(name)
	e.Create(t, u)
	return u
}
