package v1beta1

import (
	"reflect"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"
)

func TestAddToSchemeRegistersKinds(t *testing.T) {
	if got := GroupVersion.String(); got != "capi-provider.agent-install.openshift.io/v1beta1" {
		t.Fatalf("GroupVersion is %q", got)
	}
	s := runtime.NewScheme()
	if err := AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	kinds := map[string]runtime.Object{
		"AgentCluster":             &AgentCluster{},
		"AgentClusterList":         &AgentClusterList{},
		"AgentMachine":             &AgentMachine{},
		"AgentMachineList":         &AgentMachineList{},
		"AgentMachineTemplate":     &AgentMachineTemplate{},
		"AgentMachineTemplateList": &AgentMachineTemplateList{},
	}
	for kind, obj := range kinds {
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
	// No other kind of this package, and no other version: in particular
	// no v1alpha1, which upstream still serves and this mirror does not.
	// (AddToScheme also registers apimachinery's option kinds, which are
	// not ours.)
	ours := reflect.TypeOf(AgentCluster{}).PkgPath()
	for gvk, typ := range s.AllKnownTypes() {
		if typ.PkgPath() != ours {
			continue
		}
		if gvk.GroupVersion() != GroupVersion || kinds[gvk.Kind] == nil {
			t.Errorf("unexpected %v registered for %v", gvk, typ)
		}
	}
}
