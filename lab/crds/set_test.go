package crds

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"
)

func crdYAML(plural, group string, labels ...string) string {
	var b strings.Builder
	b.WriteString("apiVersion: apiextensions.k8s.io/v1\n")
	b.WriteString("kind: CustomResourceDefinition\n")
	b.WriteString("metadata:\n")
	b.WriteString("  name: " + plural + "." + group + "\n")
	if len(labels) > 0 {
		b.WriteString("  labels:\n")
		for i := 0; i+1 < len(labels); i += 2 {
			b.WriteString("    " + labels[i] + ": " + labels[i+1] + "\n")
		}
	}
	b.WriteString("spec:\n")
	b.WriteString("  group: " + group + "\n")
	b.WriteString("  names:\n")
	b.WriteString("    kind: " + strings.ToUpper(plural[:1]) + plural[1:len(plural)-1] + "\n")
	b.WriteString("    plural: " + plural + "\n")
	b.WriteString("  scope: Namespaced\n")
	b.WriteString("  versions:\n")
	b.WriteString("  - name: v1\n")
	b.WriteString("    served: true\n")
	b.WriteString("    storage: true\n")
	return b.String()
}

const configMapYAML = `apiVersion: v1
kind: ConfigMap
metadata:
  name: not-a-crd
data:
  key: value
`

func TestSetLoadMultiDocument(t *testing.T) {
	fsys := fstest.MapFS{
		"crds/b.yaml": {Data: []byte(
			"---\n" + crdYAML("widgets", "example.com", "keep", "me") +
				"---\n" + configMapYAML +
				"---\n" + crdYAML("gadgets", "example.com") +
				"---\n")},
		"crds/a.yaml":     {Data: []byte(crdYAML("apples", "fruit.example.com"))},
		"crds/ignore.txt": {Data: []byte("not yaml: [")},
	}
	s := Set{
		Name:   "test set",
		FS:     fsys,
		Files:  []string{"crds/*.yaml"},
		Labels: map[string]string{"contract": "v1", "keep": "overridden"},
	}
	got, err := s.Load()
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	var names []string
	for _, crd := range got {
		names = append(names, crd.Name)
	}
	want := []string{"apples.fruit.example.com", "gadgets.example.com", "widgets.example.com"}
	if strings.Join(names, ",") != strings.Join(want, ",") {
		t.Fatalf("Load names = %v, want %v (sorted, ConfigMap skipped)", names, want)
	}
	for _, crd := range got {
		if crd.Labels["contract"] != "v1" || crd.Labels["keep"] != "overridden" {
			t.Errorf("CRD %s labels = %v, want the set's labels applied", crd.Name, crd.Labels)
		}
		if crd.Spec.Group == "" || len(crd.Spec.Versions) != 1 {
			t.Errorf("CRD %s not decoded: %+v", crd.Name, crd.Spec)
		}
	}
	// The set's Labels map must not be shared with the CRDs.
	got[0].Labels["contract"] = "changed"
	if s.Labels["contract"] != "v1" || got[1].Labels["contract"] != "v1" {
		t.Fatal("CRD labels alias the set's Labels map")
	}
}

func TestSetLoadWithoutLabelsKeepsOwnLabels(t *testing.T) {
	fsys := fstest.MapFS{"x.yaml": {Data: []byte(crdYAML("widgets", "example.com", "keep", "me"))}}
	got, err := Set{Name: "plain", FS: fsys, Files: []string{"x.yaml"}}.Load()
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || len(got[0].Labels) != 1 || got[0].Labels["keep"] != "me" {
		t.Fatalf("got %+v, want one CRD with only its own label", got)
	}
}

func TestSetLoadErrors(t *testing.T) {
	cases := []struct {
		name    string
		set     Set
		wantAll []string
	}{
		{
			name:    "pattern matching nothing",
			set:     Set{Name: "empty set", FS: fstest.MapFS{"a.yaml": {Data: []byte(crdYAML("widgets", "example.com"))}}, Files: []string{"a.yaml", "missing/*.yaml"}},
			wantAll: []string{"empty set", `"missing/*.yaml"`},
		},
		{
			name:    "bad pattern",
			set:     Set{Name: "bad pattern set", FS: fstest.MapFS{}, Files: []string{"[unclosed"}},
			wantAll: []string{"bad pattern set", "[unclosed"},
		},
		{
			name: "unknown field",
			set: Set{Name: "strict set", FS: fstest.MapFS{"a.yaml": {Data: []byte(
				crdYAML("widgets", "example.com") + "  bogusField: 1\n")}}, Files: []string{"*.yaml"}},
			wantAll: []string{"strict set", "a.yaml", "bogusField"},
		},
		{
			name:    "malformed YAML",
			set:     Set{Name: "broken set", FS: fstest.MapFS{"dir/broken.yaml": {Data: []byte("apiVersion: v1\nkind: [unclosed\n")}}, Files: []string{"dir/*.yaml"}},
			wantAll: []string{"broken set", "broken.yaml"},
		},
		{
			name:    "no source",
			set:     Set{Name: "sourceless", Files: []string{"*.yaml"}},
			wantAll: []string{"sourceless", "neither Module nor FS"},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := c.set.Load()
			if err == nil {
				t.Fatalf("Load returned %d CRDs and no error", len(got))
			}
			for _, w := range c.wantAll {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
		})
	}
}

func TestLoadAllRefusesDuplicates(t *testing.T) {
	first := Set{Name: "first set", FS: fstest.MapFS{"a.yaml": {Data: []byte(
		crdYAML("widgets", "example.com") + "---\n" + crdYAML("gadgets", "example.com"))}}, Files: []string{"a.yaml"}}
	second := Set{Name: "second set", FS: fstest.MapFS{"b.yaml": {Data: []byte(crdYAML("widgets", "example.com"))}}, Files: []string{"b.yaml"}}

	all, err := LoadAll([]Set{first})
	if err != nil || len(all) != 2 {
		t.Fatalf("LoadAll(first) = %d CRDs, %v; want 2, nil", len(all), err)
	}

	_, err = LoadAll([]Set{first, second})
	if err == nil {
		t.Fatal("LoadAll accepted the same CRD from two sets")
	}
	for _, w := range []string{"widgets.example.com", "first set", "second set"} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error %q does not name %q", err, w)
		}
	}
}

func TestLoadAllReportsSetErrors(t *testing.T) {
	good := Set{Name: "good", FS: fstest.MapFS{"a.yaml": {Data: []byte(crdYAML("widgets", "example.com"))}}, Files: []string{"a.yaml"}}
	bad := Set{Name: "bad one", FS: fstest.MapFS{}, Files: []string{"nothing.yaml"}}
	_, err := LoadAll([]Set{good, bad})
	if err == nil || !strings.Contains(err.Error(), "bad one") {
		t.Fatalf("LoadAll error = %v, want one naming the failing set", err)
	}
}

func TestModuleDir(t *testing.T) {
	dir, err := ModuleDir("sigs.k8s.io/cluster-api")
	if err != nil {
		t.Fatalf("ModuleDir: %v", err)
	}
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		t.Fatalf("ModuleDir returned %q, not a directory (%v)", dir, err)
	}
	crd := filepath.Join(dir, "config", "crd", "bases", "cluster.x-k8s.io_clusters.yaml")
	if _, err := os.Stat(crd); err != nil {
		t.Fatalf("module dir %s lacks the Cluster CRD: %v", dir, err)
	}
}

func TestModuleDirNotADependency(t *testing.T) {
	dir, err := ModuleDir("example.com/paritylab/not-a-dependency")
	if err == nil {
		t.Fatalf("ModuleDir of a non-dependency = %q, want an error", dir)
	}
	if !strings.Contains(err.Error(), "example.com/paritylab/not-a-dependency") {
		t.Errorf("error %q does not name the module", err)
	}
}
