package labsuite

import (
	"context"
	"strings"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// testInfraGroup is the API group of the infrastructure "provider" this
// suite defines itself: CRDs only, no controller, so the suite drives the
// provider side of the contract by hand and sees only what CAPI does.
const (
	testInfraGroup   = "infrastructure.lab.paritylab.io"
	testInfraVersion = "v1alpha1"
)

// installTestProviderCRDs installs LabCluster, LabMachine and
// LabMachineTemplate, labelled for the v1beta2 contract, and waits until
// the hub serves them.
func installTestProviderCRDs(ctx context.Context, c client.Client) error {
	kinds := []string{"LabCluster", "LabMachine", "LabMachineTemplate"}
	for _, kind := range kinds {
		crd := testProviderCRD(kind)
		if err := c.Create(ctx, crd); err != nil && !apierrors.IsAlreadyExists(err) {
			return err
		}
	}
	return wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		for _, kind := range kinds {
			list := &unstructured.UnstructuredList{}
			list.SetAPIVersion(testInfraGroup + "/" + testInfraVersion)
			list.SetKind(kind + "List")
			if err := c.List(ctx, list); err != nil {
				return false, nil
			}
		}
		return true, nil
	})
}

func testProviderCRD(kind string) *apiextensionsv1.CustomResourceDefinition {
	plural := strings.ToLower(kind) + "s"
	return &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{
			Name:   plural + "." + testInfraGroup,
			Labels: map[string]string{"cluster.x-k8s.io/v1beta2": testInfraVersion},
		},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: testInfraGroup,
			Names: apiextensionsv1.CustomResourceDefinitionNames{Kind: kind, ListKind: kind + "List", Plural: plural, Singular: strings.ToLower(kind)},
			Scope: apiextensionsv1.NamespaceScoped,
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{
				Name: testInfraVersion, Served: true, Storage: true,
				Subresources: &apiextensionsv1.CustomResourceSubresources{Status: &apiextensionsv1.CustomResourceSubresourceStatus{}},
				Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
					Type:                   "object",
					XPreserveUnknownFields: ptr.To(true),
				}},
			}},
		},
	}
}
