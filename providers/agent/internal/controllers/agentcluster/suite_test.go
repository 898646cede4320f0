package agentcluster_test

import (
	"context"
	"os"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/paritylab/paritylab/providers/agent"
	"github.com/paritylab/paritylab/providers/internal/testenv"
)

// env is the API server and manager every test shares. It runs no
// controller of its own, only the provider's webhooks: each test adds its
// own AgentCluster controller to the running manager (see
// fixture.startController), filtered to the test's namespace.
var env *testenv.Environment

// The control planes the tests' Clusters name: HyperShift's
// HostedControlPlane, served at v1beta1 as HyperShift serves it, and a
// kind served at v1beta2 only, as Cluster API control planes are. Both are
// stand-ins with only the fields the provider reads (the real
// HostedControlPlane CRD comes with plan step H1).
const (
	hcpGroup   = "hypershift.openshift.io"
	hcpVersion = "v1beta1"
	hcpKind    = "HostedControlPlane"

	v1beta2Group   = "controlplane.test.paritylab.io"
	v1beta2Version = "v1beta2"
	v1beta2Kind    = "TestControlPlane"
)

func TestMain(m *testing.M) {
	os.Exit(testenv.Run(m, testenv.Options{Setup: webhooks, CRDs: []*apiextensionsv1.CustomResourceDefinition{
		controlPlaneCRD(hcpGroup, hcpVersion, hcpKind, "hostedcontrolplanes"),
		controlPlaneCRD(v1beta2Group, v1beta2Version, v1beta2Kind, "testcontrolplanes"),
	}}, &env))
}

// webhooks serves the provider's validating webhooks, which the API server
// calls for every object of the provider the tests write.
func webhooks(_ context.Context, mgr ctrl.Manager) error { return agent.SetupWebhooksWithManager(mgr) }

// controlPlaneCRD is a CRD of a control plane kind with a status
// subresource, whose schema has the fields the provider reads
// (spec.dns.baseDomain, spec.pullSecret.name, status.kubeConfig,
// status.kubeadminPassword.name) and keeps any others.
func controlPlaneCRD(group, version, kind, plural string) *apiextensionsv1.CustomResourceDefinition {
	str := apiextensionsv1.JSONSchemaProps{Type: "string"}
	obj := func(props map[string]apiextensionsv1.JSONSchemaProps) apiextensionsv1.JSONSchemaProps {
		return apiextensionsv1.JSONSchemaProps{Type: "object", XPreserveUnknownFields: ptr.To(true), Properties: props}
	}
	named := obj(map[string]apiextensionsv1.JSONSchemaProps{"name": str})
	schema := obj(map[string]apiextensionsv1.JSONSchemaProps{
		"spec": obj(map[string]apiextensionsv1.JSONSchemaProps{
			"dns":        obj(map[string]apiextensionsv1.JSONSchemaProps{"baseDomain": str}),
			"pullSecret": named,
		}),
		"status": obj(map[string]apiextensionsv1.JSONSchemaProps{
			"kubeConfig":        obj(map[string]apiextensionsv1.JSONSchemaProps{"name": str, "key": str}),
			"kubeadminPassword": named,
		}),
	})
	return &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: plural + "." + group},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: group,
			Names: apiextensionsv1.CustomResourceDefinitionNames{Kind: kind, ListKind: kind + "List", Plural: plural},
			Scope: apiextensionsv1.NamespaceScoped,
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{
				Name: version, Served: true, Storage: true,
				Subresources: &apiextensionsv1.CustomResourceSubresources{Status: &apiextensionsv1.CustomResourceSubresourceStatus{}},
				Schema:       &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &schema},
			}},
		},
	}
}
