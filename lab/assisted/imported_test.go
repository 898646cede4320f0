package assisted

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	conditionsv1 "github.com/openshift/custom-resource-status/conditions/v1"
	hivev1 "github.com/openshift/hive/apis/hive/v1"
	"github.com/openshift/hive/apis/hive/v1/agent"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/paritylab/paritylab/lab/assisted/agentapi"
	agentv1beta1 "github.com/paritylab/paritylab/providers/thirdparty/agentinstall/v1beta1"
	hiveextv1beta1 "github.com/paritylab/paritylab/providers/thirdparty/hiveextensions/v1beta1"
)

// testIgnitionCA stands for the hosted cluster's ignition server CA.
const testIgnitionCA = "-----BEGIN CERTIFICATE-----\nCA\n-----END CERTIFICATE-----\n"

// importedCluster writes what cluster-api-provider-agent's AgentCluster
// controller writes for a hosted cluster: an installed ClusterDeployment
// and an ACI with an ignition endpoint and no release, plus the endpoint's
// CA Secret.
func (h *hub) importedCluster(t *testing.T, ns string) {
	t.Helper()
	ctx := context.Background()
	cd := &hivev1.ClusterDeployment{ObjectMeta: metav1.ObjectMeta{Name: "hc1", Namespace: ns},
		Spec: hivev1.ClusterDeploymentSpec{ClusterName: "hc1", BaseDomain: "lab.example", Installed: true,
			Platform: hivev1.Platform{AgentBareMetal: &agent.BareMetalPlatform{}}}}
	aci := &hiveextv1beta1.AgentClusterInstall{ObjectMeta: metav1.ObjectMeta{Name: "hc1", Namespace: ns},
		Spec: hiveextv1beta1.AgentClusterInstallSpec{
			ClusterDeploymentRef:  corev1.LocalObjectReference{Name: "hc1"},
			ProvisionRequirements: hiveextv1beta1.ProvisionRequirements{ControlPlaneAgents: 3},
			Networking:            hiveextv1beta1.Networking{UserManagedNetworking: ptr.To(true)},
			IgnitionEndpoint: &hiveextv1beta1.IgnitionEndpoint{URL: "https://10.0.2.2:7443",
				CaCertificateReference: &hiveextv1beta1.CaCertificateReference{Namespace: ns, Name: "ignition-server-ca-cert"}},
		}}
	ca := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "ignition-server-ca-cert", Namespace: ns},
		Data: map[string][]byte{corev1.TLSCertKey: []byte(testIgnitionCA)}}
	for _, o := range []client.Object{cd, aci, ca} {
		if err := h.c.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
}

// bindAsAgentMachine binds an Agent to hc1 as cluster-api-provider-agent's
// AgentMachine controller does.
func (h *hub) bindAsAgentMachine(t *testing.T, a *agentv1beta1.Agent, tokenSecret string) {
	t.Helper()
	ctx := context.Background()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if err := h.c.Get(ctx, client.ObjectKeyFromObject(a), a); err != nil {
			return err
		}
		a.Spec.Approved = true
		a.Spec.ClusterDeploymentName = &agentv1beta1.ClusterReference{Namespace: a.Namespace, Name: "hc1"}
		a.Spec.MachineConfigPool = "ignition"
		a.Spec.IgnitionEndpointTokenReference = &agentv1beta1.IgnitionEndpointTokenReference{Namespace: a.Namespace, Name: tokenSecret}
		a.Spec.IgnitionEndpointHTTPHeaders = map[string]string{"NodePool": "clusters/np1", "TargetConfigVersionHash": "1a2b3c"}
		return h.c.Update(ctx, a)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// nextInstall is the install step queued for a host, as its agent reads it.
func (h *hub) nextInstall(t *testing.T, ie *agentv1beta1.InfraEnv, host string) (agentapi.InstallArgs, bool) {
	t.Helper()
	id := string(ie.UID)
	req, _ := http.NewRequest("GET", h.svc.URL()+agentapi.InstructionsPath(id, host), nil)
	req.Header.Set(agentapi.AuthHeader, "Bearer "+h.svc.tokens.forInfraEnv(id))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var ins agentapi.Instructions
	if err := json.NewDecoder(resp.Body).Decode(&ins); err != nil {
		t.Fatal(err)
	}
	for _, st := range ins.Instructions {
		if st.StepType == agentapi.StepInstall {
			var args agentapi.InstallArgs
			if err := json.Unmarshal(st.Args, &args); err != nil {
				t.Fatal(err)
			}
			return args, true
		}
	}
	return agentapi.InstallArgs{}, false
}

// A HyperShift hosted cluster is imported: its ACI goes to adding-hosts
// with no release, and a late-bound day-2 host installs with a pointer
// Ignition to the cluster's endpoint (URL joined with its pool, bearer
// token, the AgentMachine's headers, the endpoint's CA) and no node
// credentials. Until its token Secret exists the Agent reports SpecSynced
// False and nothing installs.
func TestImportedClusterInstallsThroughItsIgnitionEndpoint(t *testing.T) {
	t.Parallel()
	h := startHub(t)
	ns := h.namespace(t)
	ctx := context.Background()
	h.importedCluster(t, ns)
	aci := &hiveextv1beta1.AgentClusterInstall{}
	h.eventually(t, "the imported cluster adding hosts", func() bool {
		_ = h.c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "hc1"}, aci)
		return aci.Status.DebugInfo.State == hiveextv1beta1.ClusterStateAddingHosts &&
			conditionReason(aci, hiveextv1beta1.ConditionCompleted) == hiveextv1beta1.ReasonInstallationCompleted
	})
	if aci.Status.DebugInfo.StateInfo != importedStateInfo || conditionReason(aci, hiveextv1beta1.ConditionStopped) != hiveextv1beta1.ReasonInstallationCompleted ||
		conditionReason(aci, hiveextv1beta1.ConditionSpecSynced) != "SyncOK" {
		t.Errorf("imported ACI: state info %q, Stopped %q, SpecSynced %q", aci.Status.DebugInfo.StateInfo,
			conditionReason(aci, hiveextv1beta1.ConditionStopped), conditionReason(aci, hiveextv1beta1.ConditionSpecSynced))
	}

	ie := h.infraEnv(t, ns, nil)
	host := "8d1c3f2a-5b6e-4c7d-9e0f-1a2b3c4d5e6f"
	a := h.registerHost(t, ie, host, "52:54:00:00:41:01", hostInventory(4, 16, 120))
	h.bindAsAgentMachine(t, a, "agent-user-data-np1-1a2b3c")
	h.eventually(t, "the Agent's token reported missing", func() bool {
		_ = h.c.Get(ctx, client.ObjectKeyFromObject(a), a)
		return conditionStatus(a, agentv1beta1.ConditionSpecSynced) == corev1.ConditionFalse
	})
	if msg := conditionMessage(a, agentv1beta1.ConditionSpecSynced); !strings.Contains(msg, "agent-user-data-np1-1a2b3c") {
		t.Errorf("SpecSynced message %q does not name the missing Secret", msg)
	}
	if _, queued := h.nextInstall(t, ie, host); queued {
		t.Fatal("an install started without the ignition token")
	}

	token := base64.StdEncoding.EncodeToString([]byte("7c9e6679-7425-40de-944b-e07fc1f90ae7"))
	sec := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "agent-user-data-np1-1a2b3c", Namespace: ns}, Data: map[string][]byte{ignitionTokenKey: []byte(token)}}
	if err := h.c.Create(ctx, sec); err != nil {
		t.Fatal(err)
	}
	var args agentapi.InstallArgs
	h.eventually(t, "the host's install queued", func() bool {
		var ok bool
		args, ok = h.nextInstall(t, ie, host)
		return ok
	})
	n := args.Node
	if n.Name != "host-a" || n.ClientCert != "" || n.ClientKey != "" || n.CACert != "" || n.APIPort != 0 || n.Report == nil || len(args.Pulls) != 0 {
		t.Errorf("node config %+v, pulls %v; want only the name, the report target and the pointer", n, args.Pulls)
	}
	var p agentapi.PointerConfig
	if err := json.Unmarshal(n.PointerIgnition, &p); err != nil || len(p.Ignition.Config.Merge) != 1 || p.Ignition.Security == nil {
		t.Fatalf("pointer ignition %s: %v", n.PointerIgnition, err)
	}
	src := p.Ignition.Config.Merge[0]
	if src.Source != "https://10.0.2.2:7443/ignition" {
		t.Errorf("pointer source %q, want the endpoint joined with the pool", src.Source)
	}
	headers := map[string]string{}
	for _, hd := range src.HTTPHeaders {
		headers[hd.Name] = hd.Value
	}
	want := map[string]string{"Authorization": "Bearer " + token, "NodePool": "clusters/np1", "TargetConfigVersionHash": "1a2b3c"}
	if len(headers) != len(want) {
		t.Errorf("headers %v, want %v", headers, want)
	}
	for k, v := range want {
		if headers[k] != v {
			t.Errorf("header %s = %q, want %q", k, headers[k], v)
		}
	}
	cas := p.Ignition.Security.TLS.CertificateAuthorities
	if len(cas) != 1 || !strings.HasSuffix(cas[0].Source, ";base64,"+base64.StdEncoding.EncodeToString([]byte(testIgnitionCA))) {
		t.Errorf("CAs %+v, want the endpoint CA Secret's tls.crt", cas)
	}
}

func conditionStatus(a *agentv1beta1.Agent, t conditionsv1.ConditionType) corev1.ConditionStatus {
	if c := conditionsv1.FindStatusCondition(a.Status.Conditions, t); c != nil {
		return c.Status
	}
	return ""
}
