package hypershift

import (
	"reflect"
	"strings"
	"testing"

	"github.com/paritylab/paritylab/lab/crds"
)

// Every Cluster API CRD has a private twin with the same kind, versions,
// schemas and contract labels, in the private group, converted by the
// operator's shim.
func TestPrivateClusterAPI(t *testing.T) {
	if PrivateClusterAPI().ConversionPath != PrivateConversionPath {
		t.Errorf("the private CRDs' conversion path is %q", PrivateClusterAPI().ConversionPath)
	}
	standard, err := crds.ClusterAPI().Load()
	if err != nil {
		t.Fatal(err)
	}
	private, err := PrivateClusterAPI().Load()
	if err != nil {
		t.Fatal(err)
	}
	if len(private) != len(standard) || len(private) == 0 {
		t.Fatalf("%d private CRDs for %d standard ones", len(private), len(standard))
	}
	byKind := map[string]int{}
	for i, c := range standard {
		byKind[c.Spec.Names.Kind] = i
	}
	for _, p := range private {
		if !strings.HasSuffix(p.Spec.Group, "cluster.hypershift.openshift.io") || p.Name != p.Spec.Names.Plural+"."+p.Spec.Group {
			t.Errorf("CRD %s: group %s", p.Name, p.Spec.Group)
		}
		i, ok := byKind[p.Spec.Names.Kind]
		if !ok {
			t.Errorf("private kind %s has no standard CRD", p.Spec.Names.Kind)
			continue
		}
		s := standard[i]
		if strings.TrimSuffix(s.Spec.Group, "cluster.x-k8s.io") != strings.TrimSuffix(p.Spec.Group, "cluster.hypershift.openshift.io") {
			t.Errorf("%s: group %s for %s", p.Spec.Names.Kind, p.Spec.Group, s.Spec.Group)
		}
		if !reflect.DeepEqual(p.Spec.Versions, s.Spec.Versions) {
			t.Errorf("%s: versions (served, stored, schemas) differ from the standard CRD's", p.Name)
		}
		for k, v := range s.Labels {
			if p.Labels[k] != v {
				t.Errorf("%s: label %s=%q, want %q as the standard CRD's", p.Name, k, p.Labels[k], v)
			}
		}
	}
}
