package v1beta1

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	hivev1 "github.com/openshift/hive/apis/hive/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
)

func findCondition(conds []hivev1.ClusterInstallCondition, t hivev1.ClusterInstallConditionType) *hivev1.ClusterInstallCondition {
	for i := range conds {
		if conds[i].Type == t {
			return &conds[i]
		}
	}
	return nil
}

func TestDecodeMultiNodeAgentClusterInstall(t *testing.T) {
	var aci AgentClusterInstall
	load(t, "agentclusterinstall-mno.yaml", &aci, AgentClusterInstallKind)

	if !strings.Contains(aci.Annotations[InstallConfigOverridesAnnotation], "OVNKubernetes") {
		t.Errorf("annotations = %v", aci.Annotations)
	}

	s := aci.Spec
	if s.ClusterDeploymentRef.Name != "mno-site2" || s.ImageSetRef == nil || s.ImageSetRef.Name != "openshift-4.14.12" {
		t.Errorf("clusterDeploymentRef/imageSetRef = %+v/%+v", s.ClusterDeploymentRef, s.ImageSetRef)
	}
	if s.APIVIP != "10.16.232.5" || len(s.APIVIPs) != 1 || s.APIVIPs[0] != "10.16.232.5" ||
		s.IngressVIP != "10.16.232.6" || len(s.IngressVIPs) != 1 || s.IngressVIPs[0] != "10.16.232.6" {
		t.Errorf("VIPs = %q %v %q %v", s.APIVIP, s.APIVIPs, s.IngressVIP, s.IngressVIPs)
	}
	n := s.Networking
	if len(n.ClusterNetwork) != 1 || n.ClusterNetwork[0] != (ClusterNetworkEntry{CIDR: "10.128.0.0/14", HostPrefix: 23}) ||
		len(n.MachineNetwork) != 1 || n.MachineNetwork[0].CIDR != "10.16.232.0/24" ||
		len(n.ServiceNetwork) != 1 || n.ServiceNetwork[0] != "172.30.0.0/16" ||
		n.NetworkType != "OVNKubernetes" || n.UserManagedNetworking == nil || *n.UserManagedNetworking {
		t.Errorf("networking = %+v", n)
	}
	if s.ProvisionRequirements != (ProvisionRequirements{ControlPlaneAgents: 3, WorkerAgents: 2}) {
		t.Errorf("provisionRequirements = %+v", s.ProvisionRequirements)
	}
	if !strings.HasPrefix(s.SSHPublicKey, "ssh-ed25519 ") || s.HoldInstallation || s.MastersSchedulable ||
		s.PlatformType != PlatformTypeBareMetal {
		t.Errorf("sshPublicKey/holdInstallation/mastersSchedulable/platformType = %q/%v/%v/%q",
			s.SSHPublicKey, s.HoldInstallation, s.MastersSchedulable, s.PlatformType)
	}
	if s.ManifestsConfigMapRef == nil || s.ManifestsConfigMapRef.Name != "mno-site2-legacy-manifests" ||
		len(s.ManifestsConfigMapRefs) != 2 || s.ManifestsConfigMapRefs[1].Name != "common-extra-manifests" {
		t.Errorf("manifestsConfigMapRef(s) = %+v/%+v", s.ManifestsConfigMapRef, s.ManifestsConfigMapRefs)
	}
	if s.ControlPlane == nil || *s.ControlPlane != (AgentMachinePool{Name: MasterAgentMachinePool, Hyperthreading: HyperthreadingEnabled}) ||
		len(s.Compute) != 1 || s.Compute[0].Name != WorkerAgentMachinePool {
		t.Errorf("controlPlane/compute = %+v/%+v", s.ControlPlane, s.Compute)
	}
	if s.Proxy == nil || s.Proxy.HTTPProxy != "http://proxy.example.com:3128" {
		t.Errorf("proxy = %+v", s.Proxy)
	}
	if s.IgnitionEndpoint == nil || s.IgnitionEndpoint.URL != "https://ignition.example.com/config/worker" ||
		s.IgnitionEndpoint.CaCertificateReference == nil || s.IgnitionEndpoint.CaCertificateReference.Name != "ignition-ca" {
		t.Errorf("ignitionEndpoint = %+v", s.IgnitionEndpoint)
	}
	if d := s.DiskEncryption; d == nil || d.EnableOn == nil || *d.EnableOn != "all" || d.Mode == nil || *d.Mode != "tang" ||
		!strings.Contains(d.TangServers, "tang.example.com") {
		t.Errorf("diskEncryption = %+v", s.DiskEncryption)
	}
	if s.MirrorRegistryRef == nil || s.MirrorRegistryRef.Namespace != "mno-site2" ||
		s.LoadBalancer == nil || s.LoadBalancer.Type != LoadBalancerTypeClusterManaged {
		t.Errorf("mirrorRegistryRef/loadBalancer = %+v/%+v", s.MirrorRegistryRef, s.LoadBalancer)
	}
	m := s.ClusterMetadata
	if m == nil || m.InfraID != "mno-site2-x7k2p" || m.AdminKubeconfigSecretRef.Name != "mno-site2-admin-kubeconfig" ||
		m.AdminPasswordSecretRef == nil || m.AdminPasswordSecretRef.Name != "mno-site2-admin-password" {
		t.Errorf("clusterMetadata = %+v", m)
	}

	st := aci.Status
	if st.DebugInfo.State != ClusterStateInstalling || st.DebugInfo.StateInfo != "Installation in progress" ||
		!strings.Contains(st.DebugInfo.EventsURL, "cluster_id=") {
		t.Errorf("debugInfo = %+v", st.DebugInfo)
	}
	if st.Progress.TotalPercentage != 42 {
		t.Errorf("progress = %+v", st.Progress)
	}
	if st.ControlPlaneAgentsDiscovered != 3 || st.ControlPlaneAgentsReady != 3 || st.WorkerAgentsDiscovered != 2 || st.WorkerAgentsReady != 2 {
		t.Errorf("agent counts = %d/%d/%d/%d", st.ControlPlaneAgentsDiscovered, st.ControlPlaneAgentsReady, st.WorkerAgentsDiscovered, st.WorkerAgentsReady)
	}
	if st.APIVIP != "10.16.232.5" || len(st.APIVIPs) != 1 || len(st.IngressVIPs) != 1 || st.IngressVIP != "10.16.232.6" ||
		st.UserManagedNetworking == nil || *st.UserManagedNetworking || st.PlatformType != PlatformTypeBareMetal ||
		len(st.MachineNetwork) != 1 || !strings.Contains(st.ConnectivityMajorityGroups, "IPv4") {
		t.Errorf("status networking = %+v", st)
	}
	if v := st.ValidationsInfo["network"]; len(v) != 2 || v[0].ID != "api-vips-defined" || len(st.ValidationsInfo) != 4 {
		t.Errorf("validationsInfo = %+v", st.ValidationsInfo)
	}
	for typ, want := range map[hivev1.ClusterInstallConditionType]struct {
		status corev1.ConditionStatus
		reason string
	}{
		ConditionSpecSynced:                        {corev1.ConditionTrue, ReasonSyncOK},
		ConditionValidated:                         {corev1.ConditionTrue, ReasonValidationsPassing},
		ConditionRequirementsMet:                   {corev1.ConditionTrue, ReasonClusterAlreadyInstalling},
		ConditionCompleted:                         {corev1.ConditionFalse, ReasonInstallationInProgress},
		ConditionFailed:                            {corev1.ConditionFalse, ReasonInstallationNotFailed},
		ConditionStopped:                           {corev1.ConditionFalse, ReasonInstallationNotStopped},
		ConditionLastInstallationPreparationFailed: {corev1.ConditionFalse, ReasonLastPreparationPending},
	} {
		c := findCondition(st.Conditions, typ)
		if c == nil || c.Status != want.status || c.Reason != want.reason || c.LastProbeTime.IsZero() {
			t.Errorf("condition %s = %+v, want %s/%s", typ, c, want.status, want.reason)
		}
	}
}

func TestDecodeSingleNodeAgentClusterInstall(t *testing.T) {
	var aci AgentClusterInstall
	load(t, "agentclusterinstall-sno.yaml", &aci, AgentClusterInstallKind)
	s := aci.Spec
	if s.ProvisionRequirements.ControlPlaneAgents != 1 || s.ProvisionRequirements.WorkerAgents != 0 {
		t.Errorf("provisionRequirements = %+v", s.ProvisionRequirements)
	}
	if n := s.Networking; len(n.ClusterNetwork) != 2 || n.ClusterNetwork[1].HostPrefix != 64 || len(n.ServiceNetwork) != 2 ||
		n.UserManagedNetworking == nil || !*n.UserManagedNetworking {
		t.Errorf("networking = %+v", n)
	}
	if s.PlatformType != PlatformTypeNone || s.External == nil || s.External.PlatformName != "Unknown" ||
		s.External.CloudControllerManager != CloudControllerManagerNone {
		t.Errorf("platformType/external = %q/%+v", s.PlatformType, s.External)
	}
	if s.ClusterMetadata != nil || s.APIVIPs != nil {
		t.Errorf("clusterMetadata/apiVIPs set: %+v/%v", s.ClusterMetadata, s.APIVIPs)
	}
	st := aci.Status
	if st.DebugInfo.State != ClusterStateInsufficient {
		t.Errorf("state = %q", st.DebugInfo.State)
	}
	if c := findCondition(st.Conditions, ConditionRequirementsMet); c == nil || c.Reason != ReasonInsufficientAgents {
		t.Errorf("RequirementsMet = %+v", c)
	}
}

// Both manifests survive decode, encode, decode unchanged.
func TestRoundTrip(t *testing.T) {
	for _, name := range []string{"agentclusterinstall-mno.yaml", "agentclusterinstall-sno.yaml"} {
		t.Run(name, func(t *testing.T) {
			first := &AgentClusterInstall{}
			load(t, name, first, AgentClusterInstallKind)
			js, err := json.Marshal(first)
			if err != nil {
				t.Fatal(err)
			}
			second := &AgentClusterInstall{}
			if err := decodeStrict(js, second); err != nil {
				t.Fatalf("re-decoding %s: %v", js, err)
			}
			if !equality.Semantic.DeepEqual(first, second) {
				t.Errorf("round trip changed the object:\nfirst:  %+v\nsecond: %+v", first, second)
			}
		})
	}
}

// A field spelt differently from upstream must fail decoding, including a
// difference in case only.
func TestMisspeltFieldsRejected(t *testing.T) {
	for _, tc := range []struct{ from, to string }{
		{"  apiVIPs:", "  apiVips:"},
		{"ingressVIP:", "ingressVip:"},
		{"hostPrefix:", "host_prefix:"},
		{"controlPlaneAgents:", "controlplaneAgents:"},
		{"manifestsConfigMapRefs:", "manifestConfigMapRefs:"},
		{"totalPercentage:", "percentage:"},
		{"clusterDeploymentRef:", "clusterDeploymentReference:"},
		{"userManagedNetworking: false\n  provision", "usermanagedNetworking: false\n  provision"},
		{"lastProbeTime:", "lastProbe:"},
	} {
		data, err := os.ReadFile(filepath.Join("testdata", "agentclusterinstall-mno.yaml"))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(data), tc.from) {
			t.Fatalf("manifest does not contain %q", tc.from)
		}
		bad := strings.Replace(string(data), tc.from, tc.to, 1)
		if err := decodeStrict([]byte(bad), &AgentClusterInstall{}); err == nil {
			t.Errorf("manifest with %q accepted", tc.to)
		}
	}
}

func TestDeepCopyIsIndependent(t *testing.T) {
	var aci AgentClusterInstall
	load(t, "agentclusterinstall-mno.yaml", &aci, AgentClusterInstallKind)
	c := aci.DeepCopy()
	*c.Spec.Networking.UserManagedNetworking = true
	c.Spec.ClusterMetadata.AdminPasswordSecretRef.Name = "other"
	c.Status.Conditions[0].Reason = "Changed"
	c.Status.ValidationsInfo["network"][0].Status = "failure"
	if *aci.Spec.Networking.UserManagedNetworking || aci.Spec.ClusterMetadata.AdminPasswordSecretRef.Name != "mno-site2-admin-password" ||
		aci.Status.Conditions[0].Reason != ReasonSyncOK || aci.Status.ValidationsInfo["network"][0].Status != "success" {
		t.Error("DeepCopy shares memory with the original AgentClusterInstall")
	}
}
