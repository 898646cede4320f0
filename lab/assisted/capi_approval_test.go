package assisted

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	conditionsv1 "github.com/openshift/custom-resource-status/conditions/v1"
	hivev1 "github.com/openshift/hive/apis/hive/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	"github.com/paritylab/paritylab/lab/agentproviders"
	"github.com/paritylab/paritylab/lab/controllers"
	"github.com/paritylab/paritylab/lab/crds"
	"github.com/paritylab/paritylab/providers/bootstrap"
	bootstrapv1 "github.com/paritylab/paritylab/providers/bootstrap/api/v1alpha2"
	agentv1beta1 "github.com/paritylab/paritylab/providers/thirdparty/agentinstall/v1beta1"
	hiveextv1beta1 "github.com/paritylab/paritylab/providers/thirdparty/hiveextensions/v1beta1"
)

// In the CAPI flow nobody but the bootstrap provider approves the Agent
// of a Machine's host: BMAC leaves hosts without an InfraEnv label alone
// (the host CAPM3 provisions has none), and the lab's service approves
// nothing by itself. With the provider's Agent controller left out, the
// single-node install stops at an unapproved Agent; with it, the same
// host is approved as the Machine's master and the install starts.
func TestCAPIInstallWaitsForTheBootstrapProviderToApprove(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name          string
		agentApproval bool
	}{
		{name: "without the provider's Agent controller", agentApproval: false},
		{name: "with it", agentApproval: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := startHubWith(t, noSpokes{},
				&controllers.CRDsOnly{ComponentName: "cluster-api", Sets: []crds.Set{crds.ClusterAPI()}},
				agentproviders.NewBootstrap(bootstrap.Options{Concurrency: 2, SkipAgentController: !tc.agentApproval}))
			ctx := context.Background()
			ns := h.namespace(t)
			site := capiSNO(t, h, ns)
			agent := h.registerHost(t, site.infraEnv, "7c8e2c0a-1111-4222-8333-944455550001", site.mac, hostInventory(8, 32, 120))
			aci := &hiveextv1beta1.AgentClusterInstall{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "sno"}}
			defer func() {
				if t.Failed() {
					_ = h.c.Get(ctx, client.ObjectKeyFromObject(aci), aci)
					_ = h.c.Get(ctx, client.ObjectKeyFromObject(agent), agent)
					raw, _ := json.MarshalIndent(map[string]any{"aci": aci.Status, "agent": agent}, "", " ")
					t.Logf("%s", raw)
				}
			}()
			if tc.agentApproval {
				expectApprovedByTheProvider(t, h, agent, aci)
				return
			}
			expectStalledUnapproved(t, h, agent, aci)
		})
	}
}

// expectApprovedByTheProvider: the Agent is approved as the control-plane
// Machine's master (nobody else approves, as the other case shows), and
// the install leaves "insufficient" for its preparation.
func expectApprovedByTheProvider(t *testing.T, h *hub, agent *agentv1beta1.Agent, aci *hiveextv1beta1.AgentClusterInstall) {
	t.Helper()
	ctx := context.Background()
	h.eventually(t, "the bootstrap provider to approve the Agent as the Machine's master", func() bool {
		_ = h.c.Get(ctx, client.ObjectKeyFromObject(agent), agent)
		return agent.Spec.Approved && agent.Spec.Role == agentv1beta1.HostRoleMaster
	})
	if agent.Labels[agentv1beta1.BareMetalHostLabel] != "" {
		t.Errorf("BMAC bound the Agent of a host without an InfraEnv label: labels %v", agent.Labels)
	}
	h.eventually(t, "the install to get past insufficient", func() bool {
		_ = h.c.Get(ctx, client.ObjectKeyFromObject(aci), aci)
		s := aci.Status.DebugInfo.State
		return s == hiveextv1beta1.ClusterStateReady || s == hiveextv1beta1.ClusterStatePreparingForInstallation
	})
}

// expectStalledUnapproved: the service has taken the host's inventory
// and validated it, and then the Agent stays unapproved and the install
// insufficient, as long as anyone would wait for an approval.
func expectStalledUnapproved(t *testing.T, h *hub, agent *agentv1beta1.Agent, aci *hiveextv1beta1.AgentClusterInstall) {
	t.Helper()
	ctx := context.Background()
	h.eventually(t, "the service to validate the host and say it waits for approval", func() bool {
		_ = h.c.Get(ctx, client.ObjectKeyFromObject(agent), agent)
		c := conditionsv1.FindStatusCondition(agent.Status.Conditions, agentv1beta1.ConditionRequirementsMet)
		v := conditionsv1.FindStatusCondition(agent.Status.Conditions, agentv1beta1.ConditionValidated)
		return c != nil && c.Reason == agentv1beta1.ReasonAgentNotApproved && v != nil && v.Status == corev1.ConditionTrue
	})
	// The service and BMAC act on an Agent within a reconcile; 20 s is
	// many of their rounds (the service rechecks hosts every few seconds).
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		if err := h.c.Get(ctx, client.ObjectKeyFromObject(agent), agent); err != nil {
			t.Fatal(err)
		}
		if err := h.c.Get(ctx, client.ObjectKeyFromObject(aci), aci); err != nil {
			t.Fatal(err)
		}
		if agent.Spec.Approved || agent.Labels[agentv1beta1.BareMetalHostLabel] != "" {
			t.Fatalf("someone approved or bound the Agent without the bootstrap provider: approved %v, labels %v", agent.Spec.Approved, agent.Labels)
		}
		if s := aci.Status.DebugInfo.State; s != hiveextv1beta1.ClusterStateInsufficient {
			t.Fatalf("the install is %q with its only host unapproved, want %q", s, hiveextv1beta1.ClusterStateInsufficient)
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// capiSite is what a CAPI single-node install has made on the hub by the
// time its host boots the discovery image.
type capiSite struct {
	mac      string
	infraEnv *agentv1beta1.InfraEnv
}

// capiSNO writes what CAPI core and our control-plane provider write for
// a single-node cluster (the Cluster with its infrastructure provisioned;
// the ClusterDeployment, AgentClusterInstall and ClusterImageSet; the
// control-plane Machine and its OpenshiftAssistedConfig) and the
// BareMetalHost CAPM3 chose, which carries no InfraEnv label; then it
// waits for the bootstrap provider's InfraEnv and its image.
func capiSNO(t *testing.T, h *hub, ns string) capiSite {
	t.Helper()
	ctx := context.Background()
	const name, machine, mac = "sno", "sno-cp-0", "52:54:00:00:50:01"
	ps := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "pull-secret", Namespace: ns},
		StringData: map[string]string{".dockerconfigjson": `{"auths":{}}`}, Type: corev1.SecretTypeDockerConfigJson}
	cl := &clusterv1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}, Spec: clusterv1.ClusterSpec{
		ControlPlaneRef:   clusterv1.ContractVersionedObjectReference{APIGroup: "controlplane.cluster.x-k8s.io", Kind: "OpenshiftAssistedControlPlane", Name: name},
		InfrastructureRef: clusterv1.ContractVersionedObjectReference{APIGroup: "infrastructure.cluster.x-k8s.io", Kind: "Metal3Cluster", Name: name}}}
	for _, o := range []client.Object{ps, cl} {
		if err := h.c.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	cl.Status.Initialization.InfrastructureProvisioned = ptr.To(true)
	if err := h.c.Status().Update(ctx, cl); err != nil {
		t.Fatal(err)
	}
	cluster(t, h, ns, 1)
	// The control plane labels its ClusterDeployment with the cluster's
	// name; the bootstrap provider finds it by that label.
	cd := &hivev1.ClusterDeployment{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	if err := h.c.Patch(ctx, cd, client.RawPatch(types.MergePatchType,
		[]byte(`{"metadata":{"labels":{"`+clusterv1.ClusterNameLabel+`":"`+name+`"}}}`))); err != nil {
		t.Fatal(err)
	}
	m := &clusterv1.Machine{ObjectMeta: metav1.ObjectMeta{Name: machine, Namespace: ns,
		Labels: map[string]string{clusterv1.ClusterNameLabel: name, clusterv1.MachineControlPlaneLabel: ""}},
		Spec: clusterv1.MachineSpec{ClusterName: name,
			Bootstrap: clusterv1.Bootstrap{ConfigRef: clusterv1.ContractVersionedObjectReference{
				APIGroup: bootstrapv1.GroupVersion.Group, Kind: "OpenshiftAssistedConfig", Name: machine}},
			InfrastructureRef: clusterv1.ContractVersionedObjectReference{
				APIGroup: "infrastructure.cluster.x-k8s.io", Kind: "Metal3Machine", Name: machine}}}
	if err := h.c.Create(ctx, m); err != nil {
		t.Fatal(err)
	}
	oac := &bootstrapv1.OpenshiftAssistedConfig{ObjectMeta: metav1.ObjectMeta{Name: machine, Namespace: ns,
		Labels:          map[string]string{clusterv1.ClusterNameLabel: name},
		OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(m, clusterv1.GroupVersion.WithKind("Machine"))}}}
	if err := h.c.Create(ctx, oac); err != nil {
		t.Fatal(err)
	}
	h.bmh(t, ns, "capi-host", mac, nil)
	ie := &agentv1beta1.InfraEnv{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: machine}}
	h.eventually(t, "the bootstrap provider's InfraEnv and its discovery image", func() bool {
		return h.c.Get(ctx, client.ObjectKeyFromObject(ie), ie) == nil && ie.Status.ISODownloadURL != ""
	})
	return capiSite{mac: mac, infraEnv: ie}
}
