package crds

import (
	"context"
	"fmt"
	"sort"
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/version"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// contractLabels are the Cluster API contract labels this lab's CAPI
// honours, newest first: v1beta2, and v1beta1 for providers not yet moved.
var contractLabels = []string{ContractLabelV1Beta2, ContractLabelV1Beta1}

// ContractAPIVersion returns "<group>/<version>" for a provider kind: the
// newest API version listed in the newest contract label of its CRD. This is
// the rule Cluster API applies to references that carry only an API group.
func ContractAPIVersion(ctx context.Context, r client.Reader, gk schema.GroupKind) (string, error) {
	crd := &metav1.PartialObjectMetadata{}
	crd.SetGroupVersionKind(apiextensionsv1.SchemeGroupVersion.WithKind("CustomResourceDefinition"))
	name := strings.ToLower(gk.Kind) + "s." + gk.Group
	if err := r.Get(ctx, client.ObjectKey{Name: name}, crd); err != nil {
		return "", fmt.Errorf("get CRD %s: %w", name, err)
	}
	v, err := newestContractVersion(crd.GetLabels())
	if err != nil {
		return "", fmt.Errorf("CRD %s: %w", name, err)
	}
	return schema.GroupVersion{Group: gk.Group, Version: v}.String(), nil
}

func newestContractVersion(labels map[string]string) (string, error) {
	for _, key := range contractLabels {
		value := labels[key]
		if value == "" {
			continue
		}
		versions := strings.Split(value, "_")
		sort.Slice(versions, func(i, j int) bool {
			return version.CompareKubeAwareVersionStrings(versions[i], versions[j]) > 0
		})
		return versions[0], nil
	}
	return "", fmt.Errorf("no Cluster API contract label (%s)", strings.Join(contractLabels, ", "))
}
