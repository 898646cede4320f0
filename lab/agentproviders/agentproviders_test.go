package agentproviders

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/paritylab/paritylab/lab/crds"
)

func TestComponents(t *testing.T) {
	all := New(Options{})
	if len(all) != 2 {
		t.Fatalf("New returned %d components, want 2", len(all))
	}
	wantCRDs := map[string][]string{
		"openshift-assisted-bootstrap": {
			"openshiftassistedconfigs.bootstrap.cluster.x-k8s.io",
			"openshiftassistedconfigtemplates.bootstrap.cluster.x-k8s.io",
		},
		"openshift-assisted-controlplane": {"openshiftassistedcontrolplanes.controlplane.cluster.x-k8s.io"},
	}
	s := runtime.NewScheme()
	for _, c := range all {
		if err := c.AddToScheme(s); err != nil {
			t.Fatalf("%s: AddToScheme: %v", c.Name(), err)
		}
		loaded, err := crds.LoadAll(c.CRDs())
		if err != nil {
			t.Fatalf("%s: load CRDs: %v", c.Name(), err)
		}
		var names []string
		for _, crd := range loaded {
			names = append(names, crd.Name)
			if crd.Labels["cluster.x-k8s.io/v1beta2"] == "" {
				t.Errorf("%s: CRD %s lacks the v1beta2 contract label", c.Name(), crd.Name)
			}
		}
		if strings.Join(names, ",") != strings.Join(wantCRDs[c.Name()], ",") {
			t.Errorf("%s: CRDs %v, want %v", c.Name(), names, wantCRDs[c.Name()])
		}
		w, err := c.Webhooks()
		if err != nil {
			t.Fatalf("%s: Webhooks: %v", c.Name(), err)
		}
		if len(w.Validating) != 1 || len(w.Validating[0].Webhooks) == 0 {
			t.Fatalf("%s: want one validating configuration with webhooks, got %+v", c.Name(), w)
		}
		for _, h := range w.Validating[0].Webhooks {
			if h.ClientConfig.Service == nil || h.ClientConfig.Service.Path == nil {
				t.Errorf("%s: webhook %s has no service path for the host to serve", c.Name(), h.Name)
			}
		}
	}
	if !s.Recognizes(crdsKind("controlplane.cluster.x-k8s.io", "v1alpha3", "OpenshiftAssistedControlPlane")) ||
		!s.Recognizes(crdsKind("bootstrap.cluster.x-k8s.io", "v1alpha2", "OpenshiftAssistedConfig")) {
		t.Error("the scheme does not know the providers' kinds")
	}
}

func crdsKind(group, version, kind string) schema.GroupVersionKind {
	return schema.GroupVersionKind{Group: group, Version: version, Kind: kind}
}
