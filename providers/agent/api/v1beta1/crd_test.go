package v1beta1

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/yaml"
)

// crdDir is where `make generate` writes this package's CRDs.
var crdDir = filepath.Join("..", "..", "config", "crd")

func readCRD(t *testing.T, plural string) *apiextensionsv1.CustomResourceDefinition {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(crdDir, GroupName+"_"+plural+".yaml"))
	if err != nil {
		t.Fatal(err)
	}
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := yaml.UnmarshalStrict(data, crd); err != nil {
		t.Fatalf("%s: %v", plural, err)
	}
	return crd
}

// schemaAt walks a dotted path of property names through schema; an array
// is walked through its items.
func schemaAt(schema *apiextensionsv1.JSONSchemaProps, path string) *apiextensionsv1.JSONSchemaProps {
	for _, name := range strings.Split(path, ".") {
		if schema.Type == "array" && schema.Items != nil && schema.Items.Schema != nil {
			schema = schema.Items.Schema
		}
		prop, ok := schema.Properties[name]
		if !ok {
			return nil
		}
		schema = &prop
	}
	return schema
}

func TestGeneratedCRDs(t *testing.T) {
	for _, tc := range []struct {
		kind, plural string
		status       bool
		// names.categories and names.shortNames, as upstream's markers give
		// them: only the template has any.
		categories, shortNames []string
		// Property paths the Cluster API v1beta1 contract, HyperShift and
		// the upstream controllers read or write, with their types.
		paths map[string]string
		// Properties upstream's schema requires, by the path of the object
		// holding them.
		required map[string][]string
	}{
		{
			kind: "AgentCluster", plural: "agentclusters", status: true,
			paths: map[string]string{
				"spec.controlPlaneEndpoint":                              "object",
				"spec.controlPlaneEndpoint.host":                         "string",
				"spec.controlPlaneEndpoint.port":                         "integer",
				"spec.ignitionEndpoint.url":                              "string",
				"spec.ignitionEndpoint.caCertificateReference.name":      "string",
				"spec.ignitionEndpoint.caCertificateReference.namespace": "string",
				"status.ready":                                "boolean",
				"status.clusterDeploymentReference.name":      "string",
				"status.clusterDeploymentReference.namespace": "string",
				"status.conditions":                           "array",
				"status.conditions.type":                      "string",
				"status.conditions.reason":                    "string",
				"status.failureDomains.name":                  "string",
				"status.failureDomains.controlPlane":          "boolean",
			},
			required: map[string][]string{
				"spec.ignitionEndpoint.caCertificateReference": {"name", "namespace"},
				"status": {"clusterDeploymentReference"},
			},
		},
		{
			kind: "AgentMachine", plural: "agentmachines", status: true,
			paths: map[string]string{
				"spec.providerID":                      "string",
				"spec.agentLabelSelector":              "object",
				"spec.agentLabelSelector.matchLabels":  "object",
				"status.ready":                         "boolean",
				"status.agentRef.name":                 "string",
				"status.agentRef.namespace":            "string",
				"status.addresses":                     "array",
				"status.addresses.type":                "string",
				"status.addresses.address":             "string",
				"status.conditions":                    "array",
				"status.conditions.type":               "string",
				"status.conditions.status":             "string",
				"status.conditions.lastTransitionTime": "string",
				"status.failureReason":                 "string",
				"status.failureMessage":                "string",
			},
		},
		{
			kind: "AgentMachineTemplate", plural: "agentmachinetemplates",
			categories: []string{"cluster-api"}, shortNames: []string{"agentmt"},
			paths: map[string]string{
				"spec.template.spec":                                "object",
				"spec.template.spec.agentLabelSelector":             "object",
				"spec.template.spec.agentLabelSelector.matchLabels": "object",
				"spec.template.spec.providerID":                     "string",
			},
			required: map[string][]string{
				"spec":          {"template"},
				"spec.template": {"spec"},
			},
		},
	} {
		t.Run(tc.kind, func(t *testing.T) {
			crd := readCRD(t, tc.plural)
			if got, want := crd.Name, tc.plural+"."+GroupName; got != want {
				t.Errorf("name %q, want %q", got, want)
			}
			if got := crd.Labels["cluster.x-k8s.io/v1beta1"]; got != "v1beta1" {
				t.Errorf("contract label cluster.x-k8s.io/v1beta1 = %q, want v1beta1 (labels %v)", got, crd.Labels)
			}
			if len(crd.Labels) != 1 {
				t.Errorf("labels %v, want only the contract label", crd.Labels)
			}
			s := crd.Spec
			if s.Group != GroupName || s.Scope != apiextensionsv1.NamespaceScoped {
				t.Errorf("group %q scope %q", s.Group, s.Scope)
			}
			if s.Names.Kind != tc.kind || s.Names.ListKind != tc.kind+"List" || s.Names.Plural != tc.plural {
				t.Errorf("names %+v", s.Names)
			}
			if !slices.Equal(s.Names.Categories, tc.categories) || !slices.Equal(s.Names.ShortNames, tc.shortNames) {
				t.Errorf("categories %v shortNames %v, want %v %v", s.Names.Categories, s.Names.ShortNames, tc.categories, tc.shortNames)
			}
			if len(s.Versions) != 1 {
				t.Fatalf("%d versions, want v1beta1 only", len(s.Versions))
			}
			v := s.Versions[0]
			if v.Name != Version || !v.Served || !v.Storage || v.Deprecated {
				t.Errorf("version %s served=%t storage=%t deprecated=%t", v.Name, v.Served, v.Storage, v.Deprecated)
			}
			if hasStatus := v.Subresources != nil && v.Subresources.Status != nil; hasStatus != tc.status {
				t.Errorf("status subresource %t, want %t", hasStatus, tc.status)
			}
			root := v.Schema.OpenAPIV3Schema
			for path, typ := range tc.paths {
				got := schemaAt(root, path)
				if got == nil {
					t.Errorf("%s: not in the schema", path)
					continue
				}
				if got.Type != typ {
					t.Errorf("%s: type %q, want %q", path, got.Type, typ)
				}
			}
			for path, want := range tc.required {
				got := schemaAt(root, path)
				if got == nil {
					t.Errorf("%s: not in the schema", path)
					continue
				}
				for _, name := range want {
					if !slices.Contains(got.Required, name) {
						t.Errorf("%s: %q not required (required: %v)", path, name, got.Required)
					}
				}
			}
		})
	}
}

// validatorFor builds the validator an API server would use for objects of
// the CRD's v1beta1 version.
func validatorFor(t *testing.T, plural string) validation.SchemaCreateValidator {
	t.Helper()
	crd := readCRD(t, plural)
	internal := &apiextensions.CustomResourceValidation{}
	if err := apiextensionsv1.Convert_v1_CustomResourceValidation_To_apiextensions_CustomResourceValidation(
		crd.Spec.Versions[0].Schema, internal, nil); err != nil {
		t.Fatal(err)
	}
	v, _, err := validation.NewSchemaValidator(internal.OpenAPIV3Schema)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// The manifests of the decode tests, and what the Go types make of them,
// pass the generated schemas; a few objects that must not, do not.
func TestSchemaAcceptsManifests(t *testing.T) {
	for _, tc := range []struct {
		file, plural, kind string
		obj                runtime.Object
	}{
		{"agentmachinetemplate-nodepool.yaml", "agentmachinetemplates", "AgentMachineTemplate", &AgentMachineTemplate{}},
		{"agentmachine-bound.yaml", "agentmachines", "AgentMachine", &AgentMachine{}},
		{"agentcluster-hosted.yaml", "agentclusters", "AgentCluster", &AgentCluster{}},
	} {
		v := validatorFor(t, tc.plural)
		manifest := decodeManifest(t, tc.file, tc.obj, tc.kind)
		if errs := validation.ValidateCustomResource(nil, manifest, v); len(errs) > 0 {
			t.Errorf("%s: %v", tc.file, errs.ToAggregate())
		}
		if errs := validation.ValidateCustomResource(nil, toUnstructured(t, tc.obj), v); len(errs) > 0 {
			t.Errorf("%s, encoded from Go: %v", tc.file, errs.ToAggregate())
		}
	}
}

func TestSchemaRejects(t *testing.T) {
	for _, tc := range []struct {
		name, plural, field string
		obj                 any
	}{
		{
			// Upstream's quirk, kept: the endpoint's JSON key has no
			// omitempty while its schema wants at least one property, so an
			// AgentCluster must be created with its endpoint set.
			name: "AgentCluster without an endpoint", plural: "agentclusters",
			field: "spec.controlPlaneEndpoint", obj: &AgentCluster{},
		},
		{
			name: "CA reference without a namespace", plural: "agentclusters",
			field: "spec.ignitionEndpoint.caCertificateReference.namespace",
			obj: map[string]any{"spec": map[string]any{
				"controlPlaneEndpoint": map[string]any{"host": "api", "port": 6443},
				"ignitionEndpoint": map[string]any{
					"url": "https://ign/ignition", "caCertificateReference": map[string]any{"name": "ca"}},
			}},
		},
		{
			name: "unknown address type", plural: "agentmachines", field: "status.addresses[0].type",
			obj: &AgentMachine{Status: AgentMachineStatus{Addresses: []clusterv1.MachineAddress{{Type: "PodIP", Address: "10.0.0.1"}}}},
		},
		{
			name: "condition without a reason", plural: "agentmachines", field: "status.conditions[0].reason",
			obj: &AgentMachine{Status: AgentMachineStatus{Conditions: []metav1.Condition{
				{Type: AgentReservedCondition, Status: metav1.ConditionFalse, LastTransitionTime: metav1.Now()}}}},
		},
	} {
		u, ok := tc.obj.(map[string]any)
		if !ok {
			u = toUnstructured(t, tc.obj)
		}
		errs := validation.ValidateCustomResource(nil, u, validatorFor(t, tc.plural))
		if len(errs) == 0 {
			t.Errorf("%s: accepted", tc.name)
			continue
		}
		if !strings.Contains(errs.ToAggregate().Error(), tc.field) {
			t.Errorf("%s: errors %v do not name %s", tc.name, errs.ToAggregate(), tc.field)
		}
	}
}
