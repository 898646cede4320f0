package apiproxy

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

func TestPath(t *testing.T) {
	for _, c := range []struct{ standard, private string }{
		{"/apis/cluster.x-k8s.io", "/apis/cluster.hypershift.openshift.io"},
		{"/apis/cluster.x-k8s.io/v1beta2/namespaces/ns/machines/m-1/status", "/apis/cluster.hypershift.openshift.io/v1beta2/namespaces/ns/machines/m-1/status"},
		{"/apis/infrastructure.cluster.x-k8s.io/v1beta1/metal3machines", "/apis/infrastructure.cluster.hypershift.openshift.io/v1beta1/metal3machines"},
		{"/apis/apiextensions.k8s.io/v1/customresourcedefinitions/machines.cluster.x-k8s.io",
			"/apis/apiextensions.k8s.io/v1/customresourcedefinitions/machines.cluster.hypershift.openshift.io"},
		{"/apis/apiextensions.k8s.io/v1/customresourcedefinitions/machinesets.cluster.x-k8s.io/status",
			"/apis/apiextensions.k8s.io/v1/customresourcedefinitions/machinesets.cluster.hypershift.openshift.io/status"},
	} {
		if got := Path(c.standard, ToPrivate); got != c.private {
			t.Errorf("Path(%s, ToPrivate) = %s, want %s", c.standard, got, c.private)
		}
		if got := Path(c.private, ToStandard); got != c.standard {
			t.Errorf("Path(%s, ToStandard) = %s, want %s", c.private, got, c.standard)
		}
	}
	// Not Cluster API's groups: the agent provider's (a gap of the design:
	// its group does not follow the pattern), the core API, look-alikes.
	for _, p := range []string{
		"/apis/capi-provider.agent-install.openshift.io/v1beta1/agentmachines", "/api/v1/namespaces/ns/secrets",
		"/apis/xcluster.x-k8s.io/v1", "/apis/cluster.x-k8s.io.example/v1", "/apis", "/version",
		"/apis/apiextensions.k8s.io/v1/customresourcedefinitions/agents.agent-install.openshift.io",
	} {
		if got := Path(p, ToPrivate); got != p {
			t.Errorf("Path(%s, ToPrivate) = %s, want it unchanged", p, got)
		}
	}
}

// machineJSON is a Machine as a client writes it: references of both
// styles (v1beta1 apiVersion, v1beta2 apiGroup), owner references,
// managed fields and CAPI's label keys.
const machineJSON = `{"apiVersion":"cluster.x-k8s.io/v1beta2","kind":"Machine",
 "metadata":{"name":"m-1","namespace":"ns",
  "labels":{"cluster.x-k8s.io/cluster-name":"c","cluster.x-k8s.io/set-name":"ms"},
  "annotations":{"cluster.x-k8s.io/cloned-from-name":"t"},
  "ownerReferences":[{"apiVersion":"cluster.x-k8s.io/v1beta2","kind":"MachineSet","name":"ms","uid":"u1"},
   {"apiVersion":"v1","kind":"ConfigMap","name":"cm","uid":"u2"}],
  "managedFields":[{"manager":"capi","apiVersion":"cluster.x-k8s.io/v1beta2","fieldsType":"FieldsV1",
   "fieldsV1":{"f:metadata":{"f:labels":{"f:cluster.x-k8s.io/cluster-name":{}}}}}]},
 "spec":{"clusterName":"c","replicas":3,"big":9007199254740993,
  "bootstrap":{"configRef":{"apiGroup":"bootstrap.cluster.x-k8s.io","kind":"KubeadmConfig","name":"b"}},
  "infrastructureRef":{"apiGroup":"capi-provider.agent-install.openshift.io","kind":"AgentMachine","name":"am"},
  "legacyRef":{"apiVersion":"infrastructure.cluster.x-k8s.io/v1beta1","kind":"Metal3Machine","name":"m3"}}}`

func TestBodyTranslatesGroupReferencesOnly(t *testing.T) {
	private, err := Body([]byte(machineJSON), ToPrivate)
	if err != nil {
		t.Fatal(err)
	}
	got := decode(t, private)
	for path, want := range map[string]any{
		"apiVersion":                                             "cluster.hypershift.openshift.io/v1beta2",
		"kind":                                                   "Machine",
		"metadata.ownerReferences.0.apiVersion":                  "cluster.hypershift.openshift.io/v1beta2",
		"metadata.ownerReferences.1.apiVersion":                  "v1",
		"metadata.managedFields.0.apiVersion":                    "cluster.hypershift.openshift.io/v1beta2",
		"spec.bootstrap.configRef.apiGroup":                      "bootstrap.cluster.hypershift.openshift.io",
		"spec.infrastructureRef.apiGroup":                        "capi-provider.agent-install.openshift.io",
		"spec.legacyRef.apiVersion":                              "infrastructure.cluster.hypershift.openshift.io/v1beta1",
		"metadata.labels.cluster.x-k8s.io/cluster-name":          "c",
		"metadata.annotations.cluster.x-k8s.io/cloned-from-name": "t",
		"spec.big": json.Number("9007199254740993"),
	} {
		if v := lookup(got, path); !reflect.DeepEqual(v, want) {
			t.Errorf("%s = %v, want %v", path, v, want)
		}
	}
	if !strings.Contains(string(private), `"f:cluster.x-k8s.io/cluster-name"`) {
		t.Error("a managed field key lost its label key")
	}
	standard, err := Body(private, ToStandard)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(decode(t, standard), decode(t, []byte(machineJSON))) {
		t.Errorf("there and back is not the identity:\n%s", standard)
	}
}

func TestBodyListsAndWatchEvents(t *testing.T) {
	list := `{"apiVersion":"cluster.hypershift.openshift.io/v1beta2","kind":"MachineList","items":[` + machinePrivate(t) + `]}`
	out, err := Body([]byte(list), ToStandard)
	if err != nil {
		t.Fatal(err)
	}
	got := decode(t, out)
	if lookup(got, "apiVersion") != "cluster.x-k8s.io/v1beta2" || lookup(got, "items.0.apiVersion") != "cluster.x-k8s.io/v1beta2" {
		t.Errorf("list: %s", out)
	}
	event := `{"type":"MODIFIED","object":` + machinePrivate(t) + `}`
	out, err = Body([]byte(event), ToStandard)
	if err != nil {
		t.Fatal(err)
	}
	if got := decode(t, out); lookup(got, "object.apiVersion") != "cluster.x-k8s.io/v1beta2" || lookup(got, "type") != "MODIFIED" {
		t.Errorf("watch event: %s", out)
	}
}

func TestDiscoveryHidesTheHubsStandardGroups(t *testing.T) {
	groups := `{"kind":"APIGroupList","apiVersion":"v1","groups":[
	 {"name":"cluster.x-k8s.io","versions":[{"groupVersion":"cluster.x-k8s.io/v1beta2","version":"v1beta2"}],
	  "preferredVersion":{"groupVersion":"cluster.x-k8s.io/v1beta2","version":"v1beta2"}},
	 {"name":"cluster.hypershift.openshift.io","versions":[{"groupVersion":"cluster.hypershift.openshift.io/v1beta1","version":"v1beta1"}],
	  "preferredVersion":{"groupVersion":"cluster.hypershift.openshift.io/v1beta1","version":"v1beta1"}},
	 {"name":"apps","versions":[{"groupVersion":"apps/v1","version":"v1"}]}]}`
	out, err := Body([]byte(groups), ToStandard)
	if err != nil {
		t.Fatal(err)
	}
	got := decode(t, out)
	list, _ := got["groups"].([]any)
	if len(list) != 2 || lookup(got, "groups.0.name") != "cluster.x-k8s.io" || lookup(got, "groups.0.preferredVersion.groupVersion") != "cluster.x-k8s.io/v1beta1" ||
		lookup(got, "groups.0.versions.0.groupVersion") != "cluster.x-k8s.io/v1beta1" || lookup(got, "groups.1.name") != "apps" {
		t.Errorf("groups a client sees: %s", out)
	}
	resources := `{"kind":"APIResourceList","apiVersion":"v1","groupVersion":"cluster.hypershift.openshift.io/v1beta2","resources":[{"name":"machines","kind":"Machine"}]}`
	out, err = Body([]byte(resources), ToStandard)
	if err != nil {
		t.Fatal(err)
	}
	if lookup(decode(t, out), "groupVersion") != "cluster.x-k8s.io/v1beta2" {
		t.Errorf("resources: %s", out)
	}
}

func TestBodyCustomResourceDefinition(t *testing.T) {
	crd := `{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition",
	 "metadata":{"name":"machines.cluster.hypershift.openshift.io","labels":{"cluster.x-k8s.io/v1beta2":"v1beta2"}},
	 "spec":{"group":"cluster.hypershift.openshift.io","names":{"kind":"Machine","plural":"machines"}}}`
	out, err := Body([]byte(crd), ToStandard)
	if err != nil {
		t.Fatal(err)
	}
	got := decode(t, out)
	if lookup(got, "metadata.name") != "machines.cluster.x-k8s.io" || lookup(got, "spec.group") != "cluster.x-k8s.io" ||
		lookup(got, "apiVersion") != "apiextensions.k8s.io/v1" || lookup(got, "metadata.labels.cluster.x-k8s.io/v1beta2") != "v1beta2" {
		t.Errorf("CRD a client sees: %s", out)
	}
}

func TestBodyRefusesWhatIsNotJSON(t *testing.T) {
	if _, err := Body([]byte("\x0a\x0bk8s\x00protobuf"), ToStandard); err == nil {
		t.Error("a protobuf body was taken for JSON")
	}
	if out, err := Body(nil, ToPrivate); err != nil || out != nil {
		t.Errorf("empty body: %q %v", out, err)
	}
}

func machinePrivate(t *testing.T) string {
	t.Helper()
	out, err := Body([]byte(machineJSON), ToPrivate)
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}

func decode(t *testing.T, raw []byte) map[string]any {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(string(raw)))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil {
		t.Fatalf("decode %s: %v", raw, err)
	}
	return m
}

// lookup follows a dotted path of map keys and list indexes; a map key
// may itself hold dots (a label key), tried longest first.
func lookup(v any, path string) any {
	if path == "" {
		return v
	}
	switch t := v.(type) {
	case map[string]any:
		parts := strings.Split(path, ".")
		for n := len(parts); n >= 1; n-- {
			if val, ok := t[strings.Join(parts[:n], ".")]; ok {
				return lookup(val, strings.Join(parts[n:], "."))
			}
		}
	case []any:
		head, rest, _ := strings.Cut(path, ".")
		for i, e := range t {
			if head == itoa(i) {
				return lookup(e, rest)
			}
		}
	}
	return nil
}

func itoa(i int) string { return string(rune('0' + i)) }

// A JSON patch's bare group and group/version values are translated where
// its path names such a field, and only there.
func TestJSONPatch(t *testing.T) {
	in := `[{"op":"replace","path":"/spec/infrastructureRef/apiGroup","value":"infrastructure.cluster.x-k8s.io"},
	{"op":"replace","path":"/metadata/ownerReferences/0/apiVersion","value":"cluster.x-k8s.io/v1beta2"},
	{"op":"add","path":"/metadata/labels/group","value":"cluster.x-k8s.io"},
	{"op":"add","path":"/metadata/ownerReferences/-","value":{"apiVersion":"cluster.x-k8s.io/v1beta2","kind":"Machine","name":"m","uid":"u"}}]`
	out, err := JSONPatch([]byte(in), ToPrivate)
	if err != nil {
		t.Fatal(err)
	}
	var ops []map[string]any
	if err := json.Unmarshal(out, &ops); err != nil {
		t.Fatal(err)
	}
	want := []any{"infrastructure.cluster.hypershift.openshift.io", "cluster.hypershift.openshift.io/v1beta2", "cluster.x-k8s.io"}
	for i, w := range want {
		if ops[i]["value"] != w {
			t.Errorf("op %d value %v, want %v", i, ops[i]["value"], w)
		}
	}
	if got := lookup(ops[3]["value"], "apiVersion"); got != "cluster.hypershift.openshift.io/v1beta2" {
		t.Errorf("an owner reference added by the patch: apiVersion %v", got)
	}
}
