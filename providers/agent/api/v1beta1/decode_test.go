package v1beta1

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	kjson "sigs.k8s.io/json"
	"sigs.k8s.io/yaml"
)

// decodeManifest reads testdata/name into obj the way an API server's strict
// field validation would: JSON keys are matched case-sensitively, and an
// unknown or duplicate key is an error. It also checks the manifest's kind
// and returns the manifest as generic JSON for the round-trip check.
func decodeManifest(t *testing.T, name string, obj runtime.Object, kind string) map[string]any {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	js, err := yaml.YAMLToJSON(data)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	strictErrs, err := kjson.UnmarshalStrict(js, obj, kjson.DisallowUnknownFields, kjson.DisallowDuplicateFields)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	for _, e := range strictErrs {
		t.Errorf("%s: %v", name, e)
	}
	if got, want := obj.GetObjectKind().GroupVersionKind(), GroupVersion.WithKind(kind); got != want {
		t.Fatalf("%s: manifest is %v, want %v", name, got, want)
	}
	var manifest map[string]any
	if err := json.Unmarshal(js, &manifest); err != nil {
		t.Fatal(err)
	}
	return manifest
}

// assertRoundTrip encodes obj and checks that it gives back exactly the
// manifest it was decoded from: same keys, same values, nothing dropped,
// renamed or added.
func assertRoundTrip(t *testing.T, manifest map[string]any, obj runtime.Object) {
	t.Helper()
	if got := toUnstructured(t, obj); !reflect.DeepEqual(got, manifest) {
		want, _ := json.MarshalIndent(manifest, "", "  ")
		have, _ := json.MarshalIndent(obj, "", "  ")
		t.Errorf("round trip differs\nwant: %s\n got: %s", want, have)
	}
}

// toUnstructured encodes obj the way a client sends it.
func toUnstructured(t *testing.T, obj any) map[string]any {
	t.Helper()
	data, err := json.Marshal(obj)
	if err != nil {
		t.Fatal(err)
	}
	var u map[string]any
	if err := json.Unmarshal(data, &u); err != nil {
		t.Fatal(err)
	}
	return u
}

func TestDecodeAgentMachineTemplateFromNodePool(t *testing.T) {
	var amt AgentMachineTemplate
	manifest := decodeManifest(t, "agentmachinetemplate-nodepool.yaml", &amt, "AgentMachineTemplate")

	sel := amt.Spec.Template.Spec.AgentLabelSelector
	if sel == nil {
		t.Fatal("spec.template.spec.agentLabelSelector is nil")
	}
	want := map[string]string{"hypershift.paritylab.io/pool": "workers", "location": "rack-2"}
	if !reflect.DeepEqual(sel.MatchLabels, want) {
		t.Errorf("matchLabels = %v, want %v", sel.MatchLabels, want)
	}
	if amt.Spec.Template.Spec.ProviderID != nil {
		t.Errorf("providerID = %q, want unset", *amt.Spec.Template.Spec.ProviderID)
	}
	assertRoundTrip(t, manifest, &amt)
}

func TestDecodeBoundAgentMachine(t *testing.T) {
	var am AgentMachine
	manifest := decodeManifest(t, "agentmachine-bound.yaml", &am, "AgentMachine")

	const agent = "6c1e9f4a-2b7d-4e83-a5f0-91d2c3b4e5f6"
	if am.Spec.ProviderID == nil || *am.Spec.ProviderID != "agent://"+agent {
		t.Errorf("spec.providerID = %v", am.Spec.ProviderID)
	}
	if am.Spec.AgentLabelSelector == nil || am.Spec.AgentLabelSelector.MatchLabels["hypershift.paritylab.io/pool"] != "workers" {
		t.Errorf("spec.agentLabelSelector = %+v", am.Spec.AgentLabelSelector)
	}
	st := am.Status
	if !st.Ready {
		t.Error("status.ready is false")
	}
	if st.AgentRef == nil || *st.AgentRef != (AgentReference{Namespace: "hardware-inventory", Name: agent}) {
		t.Errorf("status.agentRef = %+v", st.AgentRef)
	}
	wantAddrs := []clusterv1.MachineAddress{
		{Type: clusterv1.MachineExternalIP, Address: "192.168.111.31"},
		{Type: clusterv1.MachineInternalDNS, Address: "worker-1.lab.example.com"},
	}
	if !reflect.DeepEqual(st.Addresses, wantAddrs) {
		t.Errorf("status.addresses = %+v", st.Addresses)
	}
	if st.FailureReason != nil || st.FailureMessage != nil {
		t.Errorf("failureReason/failureMessage = %v/%v, want unset", st.FailureReason, st.FailureMessage)
	}
	wantConds := []string{AgentReservedCondition, AgentSpecSyncedCondition, AgentValidatedCondition,
		AgentRequirementsMetCondition, InstalledCondition, clusterv1.ReadyCondition}
	if len(st.Conditions) != len(wantConds) {
		t.Fatalf("%d conditions, want %d", len(st.Conditions), len(wantConds))
	}
	for i, c := range st.Conditions {
		if c.Type != wantConds[i] || c.Status != metav1.ConditionTrue || c.LastTransitionTime.IsZero() {
			t.Errorf("condition %d = %+v", i, c)
		}
	}
	if r := st.Conditions[0].Reason; r != AgentReservedReason {
		t.Errorf("AgentReserved reason = %q", r)
	}
	if r := st.Conditions[1].Reason; r != AgentConditionTrueReason {
		t.Errorf("AgentSpecSynced reason = %q", r)
	}
	if g := st.Conditions[5].ObservedGeneration; g != 2 {
		t.Errorf("Ready observedGeneration = %d", g)
	}
	assertRoundTrip(t, manifest, &am)
}

func TestDecodeHostedAgentCluster(t *testing.T) {
	var ac AgentCluster
	manifest := decodeManifest(t, "agentcluster-hosted.yaml", &ac, "AgentCluster")

	if ep := ac.Spec.ControlPlaneEndpoint; ep.Host != "api.hosted.lab.example.com" || ep.Port != 6443 || !ep.IsValid() {
		t.Errorf("spec.controlPlaneEndpoint = %+v", ep)
	}
	ie := ac.Spec.IgnitionEndpoint
	if ie == nil || ie.Url != "https://ignition-server-clusters-hosted.apps.hub.lab.example.com/ignition" {
		t.Fatalf("spec.ignitionEndpoint = %+v", ie)
	}
	if ie.CaCertificateReference == nil ||
		*ie.CaCertificateReference != (CaCertificateReference{Namespace: "clusters-hosted", Name: "ignition-server-ca-cert"}) {
		t.Errorf("caCertificateReference = %+v", ie.CaCertificateReference)
	}
	if !ac.Status.Ready {
		t.Error("status.ready is false")
	}
	if ac.Status.ClusterDeploymentRef != (ClusterDeploymentReference{Namespace: "clusters-hosted", Name: "hosted-8xk2p"}) {
		t.Errorf("status.clusterDeploymentReference = %+v", ac.Status.ClusterDeploymentRef)
	}
	if len(ac.Finalizers) != 1 || ac.Finalizers[0] != AgentClusterFinalizerName {
		t.Errorf("finalizers = %v", ac.Finalizers)
	}
	assertRoundTrip(t, manifest, &ac)
}

// A field spelled as upstream's Go name rather than its JSON name, or with
// the wrong case, is an error rather than silently dropped.
func TestDecodeRejectsMisspelledFields(t *testing.T) {
	for name, doc := range map[string]string{
		"Go name":    `{"spec":{"ignitionEndpoint":{"URL":"https://x/ignition"}}}`,
		"case":       `{"spec":{"controlPlaneEndpoint":{"Host":"api"}}}`,
		"status key": `{"status":{"clusterDeploymentRef":{"name":"cd"}}}`,
	} {
		var ac AgentCluster
		strictErrs, err := kjson.UnmarshalStrict([]byte(doc), &ac, kjson.DisallowUnknownFields)
		if err == nil && len(strictErrs) == 0 {
			t.Errorf("%s: %s decoded without error", name, doc)
		}
	}
}
