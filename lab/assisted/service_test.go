package assisted

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	conditionsv1 "github.com/openshift/custom-resource-status/conditions/v1"
	hivev1 "github.com/openshift/hive/apis/hive/v1"
	"github.com/openshift/hive/apis/hive/v1/agent"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/paritylab/paritylab/lab/assisted/agentapi"
	"github.com/paritylab/paritylab/providers/controlplane/release/releasetest"
	agentv1beta1 "github.com/paritylab/paritylab/providers/thirdparty/agentinstall/v1beta1"
	hiveextv1beta1 "github.com/paritylab/paritylab/providers/thirdparty/hiveextensions/v1beta1"
)

func TestInfraEnvImageAndDownload(t *testing.T) {
	t.Parallel()
	h := startHub(t)
	ctx := context.Background()
	ns := h.namespace(t)

	orphan := &agentv1beta1.InfraEnv{ObjectMeta: metav1.ObjectMeta{Name: "no-secret", Namespace: ns},
		Spec: agentv1beta1.InfraEnvSpec{PullSecretRef: &corev1.LocalObjectReference{Name: "missing"}}}
	if err := h.c.Create(ctx, orphan); err != nil {
		t.Fatal(err)
	}
	h.eventually(t, "ImageCreated=False for a missing pull secret", func() bool {
		_ = h.c.Get(ctx, client.ObjectKeyFromObject(orphan), orphan)
		c := conditionsv1.FindStatusCondition(orphan.Status.Conditions, agentv1beta1.ConditionImageCreated)
		return c != nil && c.Status == corev1.ConditionFalse && strings.Contains(c.Message, "pull secret") && strings.Contains(c.Message, "missing")
	})

	ie := h.infraEnv(t, ns, nil)
	if ie.Status.BootArtifacts.DiscoveryIgnitionURL == "" || ie.Status.AgentLabelSelector.MatchLabels[agentv1beta1.InfraEnvNameLabel] != "site" {
		t.Fatalf("status %+v", ie.Status)
	}
	resp, err := http.Get(ie.Status.ISODownloadURL)
	if err != nil {
		t.Fatal(err)
	}
	head := make([]byte, 32*1024+6)
	_, _ = io.ReadFull(resp.Body, head)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || string(head[32769:32774]) != "CD001" {
		t.Fatalf("ISO download: %s, ISO 9660 signature %q", resp.Status, head[32769:32774])
	}
	noKey := strings.Split(ie.Status.ISODownloadURL, "?")[0]
	if resp, _ := http.Get(noKey); resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("ISO without its key: %s", resp.Status)
	}
	resp, err = http.Get(ie.Status.BootArtifacts.DiscoveryIgnitionURL)
	if err != nil {
		t.Fatal(err)
	}
	var ign map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&ign); err != nil || ign["ignition"] == nil {
		t.Fatalf("discovery ignition: %v %v", ign, err)
	}
}

// Every malformed, oversized or hostile request is refused with a 4xx
// that says why, and nothing is created.
func TestHostileRegistrations(t *testing.T) {
	t.Parallel()
	h := startHub(t)
	ns := h.namespace(t)
	ie := h.infraEnv(t, ns, nil)
	id := string(ie.UID)
	token := h.svc.tokens.forInfraEnv(id)
	host := "0d9c8d37-5c30-4b3f-9a0a-7a3c1b8f2e11"
	reg := agentapi.RegisterRequest{HostID: host, DiscoveryAgentVersion: "test"}
	cases := []struct {
		name, method, path, token string
		body                      any
		code                      int
		reason                    string
	}{
		{"no token", "POST", agentapi.RegisterPath(id), "", reg, 401, "missing bearer token"},
		{"token of another InfraEnv", "POST", agentapi.RegisterPath(id), h.svc.tokens.forInfraEnv("other"), reg, 401, "not valid"},
		{"unknown InfraEnv", "POST", agentapi.RegisterPath("4b1e0000-0000-0000-0000-000000000000"), h.svc.tokens.forInfraEnv("4b1e0000-0000-0000-0000-000000000000"), reg, 404, "no such InfraEnv"},
		{"bad JSON", "POST", agentapi.RegisterPath(id), token, []byte(`{"host_id":`), 400, "malformed JSON"},
		{"unknown field", "POST", agentapi.RegisterPath(id), token, []byte(`{"host_id":"` + host + `","evil":true}`), 400, "unknown field"},
		{"host id not a UUID", "POST", agentapi.RegisterPath(id), token, agentapi.RegisterRequest{HostID: "../../etc"}, 400, "not a UUID"},
		{"oversized", "POST", agentapi.RegisterPath(id), token, []byte(`{"host_id":"` + strings.Repeat("a", 2<<20) + `"}`), 413, "over"},
		{"unregistered host polls", "GET", agentapi.InstructionsPath(id, host), token, nil, 404, "not registered"},
	}
	for _, c := range cases {
		code, apiErr := h.agentCall(t, c.method, c.path, c.token, c.body)
		if code != c.code || !strings.Contains(apiErr.Reason, c.reason) {
			t.Errorf("%s: got %d %q, want %d containing %q", c.name, code, apiErr.Reason, c.code, c.reason)
		}
	}
	agents := &agentv1beta1.AgentList{}
	if err := h.c.List(context.Background(), agents, client.InNamespace(ns)); err != nil || len(agents.Items) != 0 {
		t.Fatalf("refused requests created agents: %v %v", agents.Items, err)
	}

	if code, e := h.agentCall(t, "POST", agentapi.RegisterPath(id), token, reg); code != http.StatusCreated {
		t.Fatalf("valid registration: %d %s", code, e.Reason)
	}
	for _, bad := range []struct {
		path string
		body any
		code int
		why  string
	}{
		{agentapi.InstructionsPath(id, host), agentapi.StepReply{StepID: "x", StepType: "inventory", Output: "{not json"}, 400, "not a host inventory"},
		{agentapi.InstructionsPath(id, host), agentapi.StepReply{StepID: "x", StepType: "inventory", Output: "{}"}, 400, "no CPUs"},
		{agentapi.InstructionsPath(id, host), agentapi.StepReply{StepID: "x", StepType: "format-disk"}, 400, "unknown step type"},
	} {
		if code, e := h.agentCall(t, "POST", bad.path, token, bad.body); code != bad.code || !strings.Contains(e.Reason, bad.why) {
			t.Errorf("step reply: got %d %q, want %d %q", code, e.Reason, bad.code, bad.why)
		}
	}
	if code, e := h.agentCall(t, "PUT", agentapi.ProgressPath(id, host), token, agentapi.Progress{CurrentStage: "Hacking"}); code != 400 || !strings.Contains(e.Reason, "unknown install stage") {
		t.Errorf("progress: %d %q", code, e.Reason)
	}
	a := &agentv1beta1.Agent{}
	if err := h.c.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: host}, a); err != nil {
		t.Fatal(err)
	}
	if a.Status.Inventory.CPU.Count != 0 || a.Status.Progress.CurrentStage != "" {
		t.Fatalf("refused replies changed the agent: %+v", a.Status)
	}
}

// A host that fails hardware validation for its role keeps the install
// from starting, and both the Agent and the AgentClusterInstall say why.
func TestHardwareValidationBlocksInstall(t *testing.T) {
	t.Parallel()
	h := startHub(t)
	ctx := context.Background()
	ns := h.namespace(t)
	cluster(t, h, ns, 1)
	ie := h.infraEnv(t, ns, &agentv1beta1.ClusterReference{Name: "sno", Namespace: ns})
	id, token := string(ie.UID), h.svc.tokens.forInfraEnv(string(ie.UID))
	host := "5b8e2c0a-1111-4222-8333-944455556666"
	if code, e := h.agentCall(t, "POST", agentapi.RegisterPath(id), token, agentapi.RegisterRequest{HostID: host}); code != 201 {
		t.Fatalf("register: %d %s", code, e.Reason)
	}
	inv, _ := json.Marshal(hostInventory(4, 8, 120))
	if code, e := h.agentCall(t, "POST", agentapi.InstructionsPath(id, host), token, agentapi.StepReply{StepID: "i", StepType: "inventory", Output: string(inv)}); code != 204 {
		t.Fatalf("inventory: %d %s", code, e.Reason)
	}
	a := &agentv1beta1.Agent{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: host}}
	if err := h.c.Patch(ctx, a, client.RawPatch(types.MergePatchType, []byte(`{"spec":{"approved":true}}`))); err != nil {
		t.Fatal(err)
	}
	h.eventually(t, "the agent's validation failure", func() bool {
		_ = h.c.Get(ctx, client.ObjectKeyFromObject(a), a)
		c := conditionsv1.FindStatusCondition(a.Status.Conditions, agentv1beta1.ConditionValidated)
		return c != nil && c.Status == corev1.ConditionFalse &&
			strings.Contains(c.Message, "Require at least 8 CPU cores for master role, found only 4")
	})
	if a.Status.DebugInfo.State != agentv1beta1.AgentStateInsufficient {
		t.Errorf("agent state %q", a.Status.DebugInfo.State)
	}
	aci := &hiveextv1beta1.AgentClusterInstall{}
	defer func() {
		if t.Failed() {
			raw, _ := json.MarshalIndent(aci.Status, "", " ")
			t.Logf("ACI status: %s", raw)
			_ = h.c.Get(ctx, client.ObjectKeyFromObject(a), a)
			raw, _ = json.MarshalIndent(a, "", " ")
			t.Logf("agent: %s", raw)
		}
	}()
	h.eventually(t, "the ACI to stay insufficient and say why", func() bool {
		_ = h.c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "sno"}, aci)
		var validated *hivev1.ClusterInstallCondition
		for i := range aci.Status.Conditions {
			if aci.Status.Conditions[i].Type == hiveextv1beta1.ConditionValidated {
				validated = &aci.Status.Conditions[i]
			}
		}
		return aci.Status.DebugInfo.State == hiveextv1beta1.ClusterStateInsufficient && validated != nil &&
			validated.Status == corev1.ConditionFalse && strings.Contains(validated.Message, "8 CPU cores")
	})
}

// cluster creates a ClusterDeployment, its AgentClusterInstall and a
// ClusterImageSet, as a ZTP user writes them.
func cluster(t *testing.T, h *hub, ns string, masters int) {
	t.Helper()
	clusterAt(t, h, ns, masters, "quay.io/openshift-release-dev/ocp-release:4.17.3-x86_64")
}

// clusterAt is cluster with a ClusterImageSet naming releaseImage.
func clusterAt(t *testing.T, h *hub, ns string, masters int, releaseImage string) {
	t.Helper()
	ctx := context.Background()
	is := &hivev1.ClusterImageSet{ObjectMeta: metav1.ObjectMeta{Name: "openshift-v4.17.3-" + ns},
		Spec: hivev1.ClusterImageSetSpec{ReleaseImage: releaseImage}}
	cd := &hivev1.ClusterDeployment{ObjectMeta: metav1.ObjectMeta{Name: "sno", Namespace: ns},
		Spec: hivev1.ClusterDeploymentSpec{ClusterName: "sno", BaseDomain: "lab.example",
			Platform:          hivev1.Platform{AgentBareMetal: &agent.BareMetalPlatform{AgentSelector: metav1.LabelSelector{}}},
			PullSecretRef:     &corev1.LocalObjectReference{Name: "pull-secret"},
			ClusterInstallRef: &hivev1.ClusterInstallLocalReference{Group: "extensions.hive.openshift.io", Version: "v1beta1", Kind: "AgentClusterInstall", Name: "sno"}}}
	aci := &hiveextv1beta1.AgentClusterInstall{ObjectMeta: metav1.ObjectMeta{Name: "sno", Namespace: ns},
		Spec: hiveextv1beta1.AgentClusterInstallSpec{ClusterDeploymentRef: corev1.LocalObjectReference{Name: "sno"},
			ImageSetRef:           &hivev1.ClusterImageSetReference{Name: is.Name},
			ProvisionRequirements: hiveextv1beta1.ProvisionRequirements{ControlPlaneAgents: masters}}}
	for _, o := range []client.Object{is, cd, aci} {
		if err := h.c.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
}

// TestReleaseMissingFromTheRegistry: a ClusterImageSet naming a release
// the lab's registry does not have (its tag says 4.17.3) leaves the
// AgentClusterInstall with SpecSynced=False, upstream's BackendError
// naming the image and the ClusterImageSet, and no install state.
func TestReleaseMissingFromTheRegistry(t *testing.T) {
	t.Parallel()
	h := startHub(t)
	reg := releasetest.Start()
	defer reg.Close()
	ns := h.namespace(t)
	missing := reg.Host() + "/ocp/release:4.17.3-x86_64"
	clusterAt(t, h, ns, 1, missing)
	h.eventually(t, "SpecSynced=False naming the missing release", func() bool {
		aci := &hiveextv1beta1.AgentClusterInstall{}
		if err := h.c.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "sno"}, aci); err != nil {
			return false
		}
		c := aciCondition(aci, hiveextv1beta1.ConditionSpecSynced)
		return c != nil && c.Status == corev1.ConditionFalse && c.Reason == "BackendError" &&
			strings.HasPrefix(c.Message, "The Spec could not be synced due to backend error: failed to get release image '"+missing+"'. Please ensure the releaseImage field in ClusterImageSet 'openshift-v4.17.3-"+ns+"' is valid,  (error: ") &&
			aci.Status.DebugInfo.State == ""
	})
}

// BMAC approves and binds the agent of a host labelled with an InfraEnv
// (classic ZTP) and never one of a host without (a host a CAPI
// Metal3Machine provisioned: the bootstrap provider approves it, or
// nobody does).
func TestBMACApprovesOnlyZTPHosts(t *testing.T) {
	t.Parallel()
	h := startHub(t)
	ctx := context.Background()
	ns := h.namespace(t)
	ie := h.infraEnv(t, ns, nil)
	h.bmh(t, ns, "ztp-host", "52:54:00:00:40:01", map[string]string{agentv1beta1.InfraEnvNameLabel: ie.Name})
	h.bmh(t, ns, "capi-host", "52:54:00:00:40:02", nil)
	ztp := h.registerHost(t, ie, "6b8e2c0a-1111-4222-8333-944455550001", "52:54:00:00:40:01", hostInventory(8, 32, 120))
	capi := h.registerHost(t, ie, "6b8e2c0a-1111-4222-8333-944455550002", "52:54:00:00:40:02", hostInventory(8, 32, 120))
	h.eventually(t, "the ZTP host's agent approved and bound", func() bool {
		_ = h.c.Get(ctx, client.ObjectKeyFromObject(ztp), ztp)
		return ztp.Spec.Approved && ztp.Labels[agentv1beta1.BareMetalHostLabel] == "ztp-host"
	})
	// The service first reports the host not ready (its validations run),
	// then, validated, waiting for an approval that nobody gives.
	h.eventually(t, "the CAPI host's agent validated and waiting for approval (an approval by BMAC never gets there)", func() bool {
		_ = h.c.Get(ctx, client.ObjectKeyFromObject(capi), capi)
		c := conditionsv1.FindStatusCondition(capi.Status.Conditions, agentv1beta1.ConditionRequirementsMet)
		return len(capi.Status.Inventory.Interfaces) == 1 && c != nil && c.Reason == agentv1beta1.ReasonAgentNotApproved
	})
	if capi.Spec.Approved || capi.Labels[agentv1beta1.BareMetalHostLabel] != "" {
		t.Fatalf("BMAC acted on the agent of a host without an InfraEnv label: approved %v, labels %v", capi.Spec.Approved, capi.Labels)
	}
}

// An installed host that boots again reports its stages again (a power
// cycle): the service refuses them with 409, as assisted-service does
// outside the install, and the Agent stays installed, so the BMAC never
// takes it for a day-2 host.
func TestProgressRefusedOnceInstalled(t *testing.T) {
	t.Parallel()
	h := startHub(t)
	ns := h.namespace(t)
	ie := h.infraEnv(t, ns, nil)
	id := string(ie.UID)
	token := h.svc.tokens.forInfraEnv(id)
	host := "5a0c2f6e-8a53-4c1e-9d57-4e2a9b0c7d13"
	if code, e := h.agentCall(t, "POST", agentapi.RegisterPath(id), token, agentapi.RegisterRequest{HostID: host, DiscoveryAgentVersion: "test"}); code != http.StatusCreated {
		t.Fatalf("registration: %d %s", code, e.Reason)
	}
	a := &agentv1beta1.Agent{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: host}}
	h.updateStatus(t, a, func() {
		a.Status.Progress.CurrentStage = agentv1beta1.HostStageDone
		a.Status.DebugInfo.State = agentv1beta1.AgentStateInstalled
	})
	for _, stage := range []agentv1beta1.HostStage{agentv1beta1.HostStageConfiguring, agentv1beta1.HostStageJoined} {
		code, e := h.agentCall(t, "PUT", agentapi.ProgressPath(id, host), token, agentapi.Progress{CurrentStage: string(stage)})
		if code != http.StatusConflict || !strings.Contains(e.Reason, "is installed") {
			t.Errorf("progress %s of an installed host: got %d %q, want 409 saying it is installed", stage, code, e.Reason)
		}
	}
	if err := h.c.Get(context.Background(), client.ObjectKeyFromObject(a), a); err != nil {
		t.Fatal(err)
	}
	if a.Status.Progress.CurrentStage != agentv1beta1.HostStageDone || a.Status.DebugInfo.State != agentv1beta1.AgentStateInstalled {
		t.Fatalf("refused reports changed the agent: stage %q state %q", a.Status.Progress.CurrentStage, a.Status.DebugInfo.State)
	}
}
