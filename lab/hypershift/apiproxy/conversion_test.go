package apiproxy

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clusterv1beta1 "sigs.k8s.io/cluster-api/api/core/v1beta1"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/webhook/conversion"
)

// The shim converts a private object with Cluster API's own conversion
// webhook, which knows only the standard groups: the answer names the
// private group again, and the references' groups survive the trip.
func TestConversionShim(t *testing.T) {
	scheme := runtime.NewScheme()
	if err := clusterv1beta1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	if err := clusterv1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(ConversionShim(conversion.NewWebhookHandler(scheme, conversion.NewRegistry())))
	t.Cleanup(srv.Close)

	md := `{"apiVersion":"cluster.hypershift.openshift.io/v1beta1","kind":"MachineDeployment",
	  "metadata":{"name":"np1","namespace":"clusters-hc1","uid":"u-1"},
	  "spec":{"clusterName":"hc1-abcde","replicas":2,"selector":{"matchLabels":{"pool":"np1"}},
	    "template":{"metadata":{"labels":{"pool":"np1"}},"spec":{"clusterName":"hc1-abcde",
	      "bootstrap":{"dataSecretName":"user-data-np1"},
	      "infrastructureRef":{"apiVersion":"infrastructure.cluster.hypershift.openshift.io/v1beta1","kind":"Metal3MachineTemplate","name":"np1"}}}}}`
	review := `{"apiVersion":"apiextensions.k8s.io/v1","kind":"ConversionReview","request":{"uid":"r-1",
	  "desiredAPIVersion":"cluster.hypershift.openshift.io/v1beta2","objects":[` + md + `]}}`
	resp, err := http.Post(srv.URL, "application/json", bytes.NewBufferString(review))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	out := &apiextensionsv1.ConversionReview{}
	if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
		t.Fatal(err)
	}
	if out.Response == nil || out.Response.Result.Status != "Success" || len(out.Response.ConvertedObjects) != 1 {
		t.Fatalf("conversion answer %+v", out.Response)
	}
	got := map[string]any{}
	if err := json.Unmarshal(out.Response.ConvertedObjects[0].Raw, &got); err != nil {
		t.Fatal(err)
	}
	if got["apiVersion"] != "cluster.hypershift.openshift.io/v1beta2" {
		t.Errorf("converted apiVersion %v, want the private v1beta2", got["apiVersion"])
	}
	ref := lookup(got, "spec.template.spec.infrastructureRef")
	if r, ok := ref.(map[string]any); !ok || r["apiGroup"] != "infrastructure.cluster.hypershift.openshift.io" || r["name"] != "np1" {
		t.Errorf("converted infrastructureRef %v, want the private group as apiGroup", ref)
	}
	if lookup(got, "spec.replicas") != float64(2) || lookup(got, "metadata.uid") != "u-1" {
		t.Errorf("converted object lost fields: %v", got)
	}
}
