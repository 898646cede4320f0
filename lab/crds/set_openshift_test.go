package crds

import (
	"strings"
	"testing"
	"testing/fstest"
)

// statusSubresource is the part of a version that says it has a status
// subresource, indented as crdYAML's single version.
const statusSubresource = "    subresources:\n      status: {}\n"

func scaleOverrideYAML(name, version string, extra string) string {
	return "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: " + name +
		"\nspec:\n  versions:\n  - name: " + version + "\n" + extra +
		"    subresources:\n      scale:\n        specReplicasPath: .spec.replicas\n        statusReplicasPath: .status.replicas\n"
}

// OpenShift's feature-gated pieces carry a marker annotation whose key has
// no name; the API server would refuse the CRD, so a FeatureGated set
// drops it and keeps the other annotations.
func TestSetLoadFeatureGatedDropsTheMarker(t *testing.T) {
	doc := strings.Replace(crdYAML("widgets", "example.com"), "metadata:\n",
		"metadata:\n  annotations:\n    feature-gate.release.openshift.io/: \"true\"\n    keep: me\n", 1)
	fsys := fstest.MapFS{"w/AAA_ungated.yaml": {Data: []byte(doc)}}

	plain, err := Set{Name: "plain", FS: fsys, Files: []string{"w/*.yaml"}}.Load()
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := plain[0].Annotations[featureGateMarker]; !ok {
		t.Fatalf("test input lost the marker before the set dropped it: %v", plain[0].Annotations)
	}
	got, err := Set{Name: "gated", FS: fsys, Files: []string{"w/*.yaml"}, FeatureGated: true}.Load()
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := got[0].Annotations[featureGateMarker]; ok || got[0].Annotations["keep"] != "me" {
		t.Errorf("annotations %v, want the marker gone and keep=me kept", got[0].Annotations)
	}
}

// An override adds the scale subresource and keeps the CRD's status one.
func TestSetLoadOverrideMergesSubresources(t *testing.T) {
	fsys := fstest.MapFS{
		"crds/widgets.yaml":      {Data: []byte(crdYAML("widgets", "example.com") + statusSubresource)},
		"crds/gadgets.yaml":      {Data: []byte(crdYAML("gadgets", "example.com") + statusSubresource)},
		"override/widgets.yaml":  {Data: []byte(scaleOverrideYAML("widgets.example.com", "v1", ""))},
		"override/README.ignore": {Data: []byte("not read")},
	}
	got, err := Set{Name: "overridden", FS: fsys, Files: []string{"crds/*.yaml"}, Overrides: []string{"override/*.yaml"}}.Load()
	if err != nil {
		t.Fatal(err)
	}
	for _, crd := range got {
		sub := crd.Spec.Versions[0].Subresources
		if sub == nil || sub.Status == nil {
			t.Errorf("%s lost its status subresource: %+v", crd.Name, sub)
			continue
		}
		wantScale := crd.Name == "widgets.example.com"
		if (sub.Scale != nil) != wantScale {
			t.Errorf("%s: scale subresource %+v, want one: %v", crd.Name, sub.Scale, wantScale)
		}
		if wantScale && (sub.Scale.SpecReplicasPath != ".spec.replicas" || sub.Scale.StatusReplicasPath != ".status.replicas") {
			t.Errorf("%s: scale %+v, want the override's paths", crd.Name, sub.Scale)
		}
	}
}

func TestSetLoadOverrideErrors(t *testing.T) {
	base := crdYAML("widgets", "example.com") + statusSubresource
	cases := []struct {
		name     string
		override string
		want     string
	}{
		{"a CRD the set lacks", scaleOverrideYAML("gadgets.example.com", "v1", ""), "override of CRD gadgets.example.com, which the set lacks"},
		{"a version the CRD lacks", scaleOverrideYAML("widgets.example.com", "v2", ""), "version v2, which the CRD lacks"},
		{"more than subresources", scaleOverrideYAML("widgets.example.com", "v1", "    deprecated: true\n"), "changes more than subresources"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			fsys := fstest.MapFS{"w.yaml": {Data: []byte(base)}, "o.yaml": {Data: []byte(c.override)}}
			_, err := Set{Name: "bad override", FS: fsys, Files: []string{"w.yaml"}, Overrides: []string{"o.yaml"}}.Load()
			if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "bad override") {
				t.Errorf("error %v, want one naming the set and saying %q", err, c.want)
			}
		})
	}
	fsys := fstest.MapFS{"w.yaml": {Data: []byte(base)}}
	_, err := Set{Name: "missing override", FS: fsys, Files: []string{"w.yaml"}, Overrides: []string{"none/*.yaml"}}.Load()
	if err == nil || !strings.Contains(err.Error(), `overrides: no file matches "none/*.yaml"`) {
		t.Errorf("an override pattern matching nothing: %v", err)
	}
}
