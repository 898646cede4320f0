package v1beta1

import (
	"reflect"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"
)

func TestAddToSchemeRegistersKinds(t *testing.T) {
	if got := GroupVersion.String(); got != "extensions.hive.openshift.io/v1beta1" {
		t.Fatalf("GroupVersion is %q", got)
	}
	s := runtime.NewScheme()
	if err := AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	for kind, obj := range map[string]runtime.Object{
		AgentClusterInstallKind:   &AgentClusterInstall{},
		"AgentClusterInstallList": &AgentClusterInstallList{},
	} {
		want := GroupVersion.WithKind(kind)
		gvks, _, err := s.ObjectKinds(obj)
		if err != nil {
			t.Fatalf("%s: %v", kind, err)
		}
		if len(gvks) != 1 || gvks[0] != want {
			t.Errorf("%T registered as %v, want %v", obj, gvks, want)
		}
		made, err := s.New(want)
		if err != nil {
			t.Fatalf("%s: %v", kind, err)
		}
		if reflect.TypeOf(made) != reflect.TypeOf(obj) {
			t.Errorf("scheme makes %T for %v, want %T", made, want, obj)
		}
	}
}
