package v1beta1

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"
	kjson "sigs.k8s.io/json"
	"sigs.k8s.io/yaml"
)

// decodeStrict decodes a YAML manifest the way a careful client would:
// unknown fields are errors (sigs.k8s.io/yaml.UnmarshalStrict), and so are
// fields whose case differs from the JSON tag, which encoding/json would
// otherwise accept but an API server prunes.
func decodeStrict(data []byte, into runtime.Object) error {
	if err := yaml.UnmarshalStrict(data, into); err != nil {
		return err
	}
	js, err := yaml.YAMLToJSON(data)
	if err != nil {
		return err
	}
	probe := reflect.New(reflect.TypeOf(into).Elem()).Interface()
	strict, err := kjson.UnmarshalStrict(js, probe, kjson.DisallowUnknownFields, kjson.DisallowDuplicateFields)
	if err != nil {
		return err
	}
	if len(strict) > 0 {
		return strict[0]
	}
	return nil
}

// load reads testdata/name, decodes it strictly into obj and checks the
// manifest's apiVersion and kind.
func load(t *testing.T, name string, obj runtime.Object, kind string) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	if err := decodeStrict(data, obj); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if got, want := obj.GetObjectKind().GroupVersionKind(), GroupVersion.WithKind(kind); got != want {
		t.Fatalf("%s: manifest is %v, want %v", name, got, want)
	}
}
