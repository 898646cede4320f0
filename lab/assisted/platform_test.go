package assisted

import (
	"context"
	"strings"
	"testing"

	conditionsv1 "github.com/openshift/custom-resource-status/conditions/v1"
	hivev1 "github.com/openshift/hive/apis/hive/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	agentv1beta1 "github.com/paritylab/paritylab/providers/thirdparty/agentinstall/v1beta1"
	hiveextv1beta1 "github.com/paritylab/paritylab/providers/thirdparty/hiveextensions/v1beta1"
)

// siteACI is a 3+2 cluster install with the given networking.
func siteACI(apiVIP, ingressVIP, machineNetwork string) *hiveextv1beta1.AgentClusterInstall {
	aci := &hiveextv1beta1.AgentClusterInstall{}
	aci.Spec.ProvisionRequirements = hiveextv1beta1.ProvisionRequirements{ControlPlaneAgents: 3, WorkerAgents: 2}
	if apiVIP != "" {
		aci.Spec.APIVIPs = []string{apiVIP}
	}
	if ingressVIP != "" {
		aci.Spec.IngressVIPs = []string{ingressVIP}
	}
	if machineNetwork != "" {
		aci.Spec.Networking.MachineNetwork = []hiveextv1beta1.MachineNetworkEntry{{CIDR: machineNetwork}}
	}
	return aci
}

// readySiteAgents are three masters and two workers, approved and
// validated, each on a /24 of its own inside 10.100.0.0/16 as lab hosts
// are.
func readySiteAgents() []agentv1beta1.Agent {
	var out []agentv1beta1.Agent
	for i, role := range []agentv1beta1.HostRole{"master", "master", "master", "worker", "worker"} {
		a := agentv1beta1.Agent{Spec: agentv1beta1.AgentSpec{Role: role, Approved: true, Hostname: "host-" + string(rune('a'+i))}}
		a.Status.Role = role
		a.Status.Inventory.Interfaces = []agentv1beta1.HostInterface{{Name: "eth0", IPv4Addresses: []string{"10.100." + string(rune('0'+i)) + ".15/24"}}}
		conditionsv1.SetStatusConditionNoHeartbeat(&a.Status.Conditions, conditionsv1.Condition{Type: agentv1beta1.ConditionRequirementsMet, Status: corev1.ConditionTrue})
		out = append(out, a)
	}
	return out
}

// A 3+2 site on the BareMetal platform assisted-service picks for it
// stays insufficient without VIPs, and with VIPs outside its machine
// network; with VIPs inside, it starts installing.
func TestMultiNodeSiteNeedsValidVIPs(t *testing.T) {
	cases := []struct {
		name      string
		aci       *hiveextv1beta1.AgentClusterInstall
		wantState string
		wantInfo  []string
	}{
		{"no VIPs", siteACI("", "", ""), hiveextv1beta1.ClusterStateInsufficient,
			[]string{"API virtual IPs are undefined and must be provided.", "Ingress virtual IPs are undefined and must be provided."}},
		{"VIPs outside the machine network", siteACI("192.168.7.10", "192.168.7.11", "10.100.0.0/16"), hiveextv1beta1.ClusterStateInsufficient,
			[]string{"api vips <192.168.7.10> does not belong to machine-network-cidr <10.100.0.0/16>"}},
		{"VIP on a host's address", siteACI("10.100.2.15", "10.100.254.11", "10.100.0.0/16"), hiveextv1beta1.ClusterStateInsufficient,
			[]string{"api vips <10.100.2.15> is already in use in cidr 10.100.0.0/16"}},
		{"VIP is the broadcast address", siteACI("10.100.255.255", "10.100.254.11", "10.100.0.0/16"), hiveextv1beta1.ClusterStateInsufficient,
			[]string{"api vips <10.100.255.255> is the broadcast address of machine-network-cidr <10.100.0.0/16>"}},
		{"VIPs in the machine network", siteACI("10.100.254.10", "10.100.254.11", "10.100.0.0/16"), hiveextv1beta1.ClusterStatePreparingForInstallation, nil},
		{"machine network calculated from the API VIP's host network", siteACI("10.100.0.200", "10.100.0.201", ""), hiveextv1beta1.ClusterStatePreparingForInstallation, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := &Service{events: newEventLog()}
			in := &install{aci: c.aci, agents: readySiteAgents(), cd: &hivev1.ClusterDeployment{}}
			if _, err := s.advancePreInstall(context.Background(), in); err != nil {
				t.Fatal(err)
			}
			st := in.aci.Status.DebugInfo
			if st.State != c.wantState {
				t.Fatalf("state %q (%s), want %q", st.State, st.StateInfo, c.wantState)
			}
			for _, w := range c.wantInfo {
				if !strings.Contains(st.StateInfo, w) {
					t.Errorf("state info %q does not say %q", st.StateInfo, w)
				}
			}
		})
	}
}

// The platform in effect: BareMetal for a multi-node cluster on
// cluster-managed networking, None for a single node or user-managed
// networking, whatever the spec names otherwise; the status records it.
func TestPlatformInEffect(t *testing.T) {
	sno := &hiveextv1beta1.AgentClusterInstall{}
	sno.Spec.ProvisionRequirements.ControlPlaneAgents = 1
	umn := siteACI("", "", "")
	umn.Spec.Networking.UserManagedNetworking = ptr.To(true)
	none := siteACI("", "", "")
	none.Spec.PlatformType = hiveextv1beta1.PlatformTypeNone
	cases := []struct {
		name string
		aci  *hiveextv1beta1.AgentClusterInstall
		want hiveextv1beta1.PlatformType
		umn  bool
	}{
		{"multi-node", siteACI("10.100.254.10", "10.100.254.11", ""), hiveextv1beta1.PlatformTypeBareMetal, false},
		{"single node", sno, hiveextv1beta1.PlatformTypeNone, true},
		{"user-managed networking", umn, hiveextv1beta1.PlatformTypeNone, true},
		{"platform None", none, hiveextv1beta1.PlatformTypeNone, true},
	}
	for _, c := range cases {
		n := networkingOf(c.aci)
		st := &hiveextv1beta1.AgentClusterInstallStatus{}
		n.record(st)
		if st.PlatformType != c.want || st.UserManagedNetworking == nil || *st.UserManagedNetworking != c.umn {
			t.Errorf("%s: platform %q user-managed %v, want %q %v", c.name, st.PlatformType, st.UserManagedNetworking, c.want, c.umn)
		}
		if failed := failingMessages(n.validations(readySiteAgents())); c.umn && len(failed) > 0 {
			t.Errorf("%s: VIP validations fail without VIPs needed: %v", c.name, failed)
		}
	}
}

// A host outside the machine network fails belongs-to-machine-cidr; on
// user-managed networking the validation passes.
func TestHostBelongsToMachineNetwork(t *testing.T) {
	a := readySiteAgents()[0]
	in := siteACI("10.100.254.10", "10.100.254.11", "10.100.0.0/16")
	if st, _ := networkingOf(in).inMachineNetworks(&a); st != validationSuccess {
		t.Errorf("host in 10.100.0.0/16: %s", st)
	}
	out := siteACI("10.200.254.10", "10.200.254.11", "10.200.0.0/16")
	if st, msg := networkingOf(out).inMachineNetworks(&a); st != validationFailure {
		t.Errorf("host outside 10.200.0.0/16: %s %s", st, msg)
	}
	umn := siteACI("", "", "")
	umn.Spec.Networking.UserManagedNetworking = ptr.To(true)
	if st, _ := networkingOf(umn).inMachineNetworks(&a); st != validationSuccess {
		t.Errorf("user-managed networking: %s", st)
	}
}
