package v1beta1

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	conditionsv1 "github.com/openshift/custom-resource-status/conditions/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/yaml"
)

func findCondition(conds []conditionsv1.Condition, t conditionsv1.ConditionType) *conditionsv1.Condition {
	for i := range conds {
		if conds[i].Type == t {
			return &conds[i]
		}
	}
	return nil
}

func TestDecodeInfraEnvZTP(t *testing.T) {
	var ie InfraEnv
	load(t, "infraenv-ztp.yaml", &ie, "InfraEnv")

	s := ie.Spec
	if s.ClusterRef == nil || s.ClusterRef.Name != "sno-site1" || s.ClusterRef.Namespace != "sno-site1" {
		t.Errorf("clusterRef = %+v", s.ClusterRef)
	}
	if s.PullSecretRef == nil || s.PullSecretRef.Name != "assisted-deployment-pull-secret" {
		t.Errorf("pullSecretRef = %+v", s.PullSecretRef)
	}
	if !strings.HasPrefix(s.SSHAuthorizedKey, "ssh-ed25519 ") {
		t.Errorf("sshAuthorizedKey = %q", s.SSHAuthorizedKey)
	}
	if s.Proxy == nil || s.Proxy.HTTPSProxy != "http://proxy.example.com:3128" || !strings.Contains(s.Proxy.NoProxy, ".svc") {
		t.Errorf("proxy = %+v", s.Proxy)
	}
	if len(s.AdditionalNTPSources) != 2 || s.AdditionalNTPSources[1] != "10.16.231.1" {
		t.Errorf("additionalNTPSources = %v", s.AdditionalNTPSources)
	}
	if s.NMStateConfigLabelSelector.MatchLabels["nmstate-label"] != "sno-site1" {
		t.Errorf("nmStateConfigLabelSelector = %+v", s.NMStateConfigLabelSelector)
	}
	if s.CPUArchitecture != "x86_64" || s.ImageType != ImageTypeMinimalISO || s.IPXEScriptType != IPXEDiscoveryImageAlways {
		t.Errorf("cpuArchitecture/imageType/ipxeScriptType = %q/%q/%q", s.CPUArchitecture, s.ImageType, s.IPXEScriptType)
	}
	if len(s.KernelArguments) != 2 || s.KernelArguments[1] != (KernelArgument{Operation: "delete", Value: "rd.net.timeout.carrier"}) {
		t.Errorf("kernelArguments = %+v", s.KernelArguments)
	}
	if !strings.Contains(s.AdditionalTrustBundle, "BEGIN CERTIFICATE") {
		t.Errorf("additionalTrustBundle = %q", s.AdditionalTrustBundle)
	}
	if !strings.Contains(s.IgnitionConfigOverride, "registries.conf") {
		t.Errorf("ignitionConfigOverride = %q", s.IgnitionConfigOverride)
	}
	if s.AgentLabels["sites"] != "sno-site1" {
		t.Errorf("agentLabels = %v", s.AgentLabels)
	}

	st := ie.Status
	if !strings.HasSuffix(st.ISODownloadURL, "/minimal.iso") {
		t.Errorf("isoDownloadURL = %q", st.ISODownloadURL)
	}
	if st.CreatedTime == nil || st.CreatedTime.UTC().Format("2006-01-02T15:04:05Z") != "2024-03-05T10:12:31Z" {
		t.Errorf("createdTime = %v", st.CreatedTime)
	}
	if st.AgentLabelSelector.MatchLabels[InfraEnvNameLabel] != "sno-site1" {
		t.Errorf("agentLabelSelector = %+v", st.AgentLabelSelector)
	}
	ba := st.BootArtifacts
	if !strings.Contains(ba.InitrdURL, "pxe-initrd") || !strings.Contains(ba.RootfsURL, "rootfs") ||
		!strings.Contains(ba.KernelURL, "kernel") || !strings.Contains(ba.IPXEScriptURL, "ipxe-script") ||
		!strings.Contains(ba.DiscoveryIgnitionURL, "discovery.ign") {
		t.Errorf("bootArtifacts = %+v", ba)
	}
	if !strings.Contains(st.DebugInfo.EventsURL, "/v2/events") || !strings.Contains(st.DebugInfo.StaticNetworkDownloadURL, "static-network-config") {
		t.Errorf("debugInfo = %+v", st.DebugInfo)
	}
	c := findCondition(st.Conditions, ConditionImageCreated)
	if c == nil || c.Status != corev1.ConditionTrue || c.Reason != ReasonImageCreated {
		t.Errorf("ImageCreated condition = %+v", c)
	}
}

func TestDecodeInfraEnvLateBinding(t *testing.T) {
	var ie InfraEnv
	load(t, "infraenv-late-binding.yaml", &ie, "InfraEnv")
	s := ie.Spec
	if s.ClusterRef != nil {
		t.Errorf("clusterRef = %+v, want none", s.ClusterRef)
	}
	if s.OSImageVersion != "4.15" || s.IPXEScriptType != IPXEBootOrderControl || s.ImageType != ImageTypeFullISO {
		t.Errorf("osImageVersion/ipxeScriptType/imageType = %q/%q/%q", s.OSImageVersion, s.IPXEScriptType, s.ImageType)
	}
	if s.MirrorRegistryRef == nil || s.MirrorRegistryRef.Name != "mirror-registry-config" {
		t.Errorf("mirrorRegistryRef = %+v", s.MirrorRegistryRef)
	}
}

func TestDecodeAgentWithInventory(t *testing.T) {
	var a Agent
	load(t, "agent-sno-installing.yaml", &a, "Agent")

	if a.Labels[ClusterDeploymentNamespaceLabel] != "sno-site1" || a.Labels[InfraEnvNameLabel] != "sno-site1" ||
		a.Labels[BareMetalHostLabel] != "sno-site1-node1" || a.Labels[InventoryLabelCPUArchitecture] != "x86_64" {
		t.Errorf("labels = %v", a.Labels)
	}
	if len(a.Finalizers) != 1 || a.Finalizers[0] != AgentDeprovisionFinalizer {
		t.Errorf("finalizers = %v", a.Finalizers)
	}

	s := a.Spec
	if s.ClusterDeploymentName == nil || s.ClusterDeploymentName.Name != "sno-site1" {
		t.Errorf("clusterDeploymentName = %+v", s.ClusterDeploymentName)
	}
	if !s.Approved || s.Role != HostRoleMaster || s.Hostname != "sno-site1-node1.example.com" {
		t.Errorf("approved/role/hostname = %v/%q/%q", s.Approved, s.Role, s.Hostname)
	}
	const disk = "/dev/disk/by-id/wwn-0x6c81f660e2f1a0002b5c3c4a0c1d9e2f"
	if s.InstallationDiskID != disk {
		t.Errorf("spec installation_disk_id = %q", s.InstallationDiskID)
	}
	if !strings.Contains(s.InstallerArgs, "--save-partlabel") || !strings.Contains(s.IgnitionConfigOverrides, "3.2.0") {
		t.Errorf("installerArgs/ignitionConfigOverrides = %q/%q", s.InstallerArgs, s.IgnitionConfigOverrides)
	}
	if s.MachineConfigPool != "master" || len(s.NodeLabels) != 1 {
		t.Errorf("machineConfigPool/nodeLabels = %q/%v", s.MachineConfigPool, s.NodeLabels)
	}
	if s.IgnitionEndpointTokenReference == nil || s.IgnitionEndpointTokenReference.Name != "ignition-token" ||
		s.IgnitionEndpointHTTPHeaders["X-Site"] != "sno-site1" {
		t.Errorf("ignition endpoint token/headers = %+v/%v", s.IgnitionEndpointTokenReference, s.IgnitionEndpointHTTPHeaders)
	}

	st := a.Status
	if !st.Bootstrap || st.Role != HostRoleMaster || st.Kind != HostKindHost || st.InstallationDiskID != disk {
		t.Errorf("bootstrap/role/kind/installation_disk_id = %v/%q/%q/%q", st.Bootstrap, st.Role, st.Kind, st.InstallationDiskID)
	}
	if st.DebugInfo.State != AgentStateInstallingInProgress || st.DebugInfo.StateInfo != "Writing image to disk" ||
		!strings.Contains(st.DebugInfo.EventsURL, "host_id=") {
		t.Errorf("debugInfo = %+v", st.DebugInfo)
	}
	for typ, reason := range map[conditionsv1.ConditionType]string{
		ConditionSpecSynced:      ReasonSyncOK,
		ConditionConnected:       ReasonAgentConnected,
		ConditionRequirementsMet: ReasonAgentAlreadyInstalling,
		ConditionValidated:       ReasonValidationsPassing,
		ConditionInstalled:       ReasonInstallationInProgress,
		ConditionBound:           ReasonBound,
	} {
		if c := findCondition(st.Conditions, typ); c == nil || c.Reason != reason {
			t.Errorf("condition %s = %+v, want reason %s", typ, c, reason)
		}
	}

	p := st.Progress
	if p.CurrentStage != HostStageWritingImageToDisk || p.InstallationPercentage != 42 || p.ProgressInfo != "67%" ||
		len(p.ProgressStages) != 6 || p.ProgressStages[3] != HostStageWaitingForBootkube ||
		p.StageStartTime == nil || p.StageUpdateTime == nil || !p.StageUpdateTime.After(p.StageStartTime.Time) {
		t.Errorf("progress = %+v", p)
	}
	if len(st.NTPSources) != 2 || st.NTPSources[0].SourceState != SourceStateSynced || st.NTPSources[1].SourceName != "10.16.231.1" {
		t.Errorf("ntpSources = %+v", st.NTPSources)
	}
	if v := st.ValidationsInfo["network"]; len(v) != 2 || v[1].ID != "ntp-synced" || v[1].Status != "success" {
		t.Errorf("validationsInfo[network] = %+v", v)
	}

	inv := st.Inventory
	if inv.Hostname != "sno-site1-node1" || inv.BMCAddress != "10.16.230.21" || inv.BMCV6Address != "::/0" || inv.ReportTime == nil {
		t.Errorf("hostname/bmc/reportTime = %q/%q/%q/%v", inv.Hostname, inv.BMCAddress, inv.BMCV6Address, inv.ReportTime)
	}
	if inv.SystemVendor != (HostSystemVendor{Manufacturer: "Dell Inc.", ProductName: "PowerEdge R640", SerialNumber: "7XYZ123"}) {
		t.Errorf("systemVendor = %+v", inv.SystemVendor)
	}
	if inv.CPU.Count != 64 || inv.CPU.ClockMegahertz != 2600 || inv.CPU.Architecture != "x86_64" || len(inv.CPU.Flags) != 5 {
		t.Errorf("cpu = %+v", inv.CPU)
	}
	if inv.Memory.PhysicalBytes != 206158430208 || inv.Memory.UsableBytes != 201701269504 {
		t.Errorf("memory = %+v", inv.Memory)
	}
	if inv.Boot.CurrentBootMode != "uefi" {
		t.Errorf("boot = %+v", inv.Boot)
	}
	if len(inv.Interfaces) != 2 {
		t.Fatalf("interfaces = %+v", inv.Interfaces)
	}
	nic := inv.Interfaces[0]
	if nic.Name != "eno1" || nic.MacAddress != "b8:ce:f6:56:3b:0a" || len(nic.IPv4Addresses) != 1 ||
		nic.IPv4Addresses[0] != "10.16.231.10/24" || nic.IPv6Addresses == nil || !nic.HasCarrier ||
		nic.SpeedMbps != 25000 || nic.Mtu != 1500 || nic.BiosDevName != "em1" || len(nic.Flags) != 3 {
		t.Errorf("interfaces[0] = %+v", nic)
	}
	if inv.Interfaces[1].SpeedMbps != -1 || inv.Interfaces[1].HasCarrier {
		t.Errorf("interfaces[1] = %+v", inv.Interfaces[1])
	}
	if len(inv.Disks) != 2 {
		t.Fatalf("disks = %+v", inv.Disks)
	}
	d := inv.Disks[0]
	if d.ID != disk || d.ByID != disk || d.Path != "/dev/sda" || d.DriveType != "SSD" || d.SizeBytes != 479559942144 ||
		!d.InstallationEligibility.Eligible || d.IoPerf.SyncDurationMilliseconds != 2 || d.Hctl != "0:2:0:0" {
		t.Errorf("disks[0] = %+v", d)
	}
	if d := inv.Disks[1]; d.InstallationEligibility.Eligible || len(d.InstallationEligibility.NotEligibleReasons) != 2 || !d.Bootable {
		t.Errorf("disks[1] = %+v", d)
	}
}

func TestDecodeDay2Agent(t *testing.T) {
	var a Agent
	load(t, "agent-day2-worker.yaml", &a, "Agent")
	if a.Spec.Role != HostRoleWorker || a.Spec.InstallationDiskPath != "/dev/disk/by-path/pci-0000:3b:00.0-nvme-1" {
		t.Errorf("role/installation_disk_path = %q/%q", a.Spec.Role, a.Spec.InstallationDiskPath)
	}
	st := a.Status
	if st.Kind != HostKindAddToExistingClusterHost || st.DebugInfo.State != AgentStateAddedToExistingCluster {
		t.Errorf("kind/state = %q/%q", st.Kind, st.DebugInfo.State)
	}
	if st.DeprovisionInfo == nil || st.DeprovisionInfo.ClusterName != "hosted-0" || st.DeprovisionInfo.NodeName != "worker-7" {
		t.Errorf("deprovision_info = %+v", st.DeprovisionInfo)
	}
	csrs := st.CSRStatus.ApprovedCSRs
	if len(csrs) != 2 || csrs[0].Type != CSRTypeClient || csrs[1].Type != CSRTypeServing || csrs[1].Name != "csr-9tmzp" ||
		!st.CSRStatus.LastApprovalAttempt.Equal(&csrs[1].ApprovedAt) {
		t.Errorf("csrStatus = %+v", st.CSRStatus)
	}
	if !st.Inventory.SystemVendor.Virtual || st.Inventory.Boot.PxeInterface != "ens1f0" || st.Inventory.Boot.DeviceType != "persistent" {
		t.Errorf("inventory = %+v", st.Inventory)
	}
}

func TestDecodeNMStateConfig(t *testing.T) {
	var nc NMStateConfig
	load(t, "nmstateconfig.yaml", &nc, "NMStateConfig")
	if len(nc.Spec.Interfaces) != 1 || nc.Spec.Interfaces[0] != (Interface{Name: "eno1", MacAddress: "b8:ce:f6:56:3b:0a"}) {
		t.Errorf("interfaces = %+v", nc.Spec.Interfaces)
	}

	// Config is kept as an nmstate YAML document.
	var doc struct {
		Routes struct {
			Config []map[string]any `json:"config"`
		} `json:"routes"`
		Interfaces []map[string]any `json:"interfaces"`
	}
	if err := yaml.Unmarshal(nc.Spec.Config.Raw, &doc); err != nil {
		t.Fatalf("config is not YAML: %v\n%s", err, nc.Spec.Config.Raw)
	}
	if len(doc.Routes.Config) != 1 || doc.Routes.Config[0]["next-hop-address"] != "10.16.231.1" ||
		len(doc.Interfaces) != 1 || doc.Interfaces[0]["name"] != "eno1" {
		t.Errorf("config = %s", nc.Spec.Config.Raw)
	}

	// And written back as a JSON object, not a string.
	out, err := json.Marshal(&nc)
	if err != nil {
		t.Fatal(err)
	}
	var back struct {
		Spec struct {
			Config map[string]any `json:"config"`
		} `json:"spec"`
	}
	if err := json.Unmarshal(out, &back); err != nil {
		t.Fatal(err)
	}
	if _, ok := back.Spec.Config["dns-resolver"]; !ok {
		t.Errorf("marshalled config lost dns-resolver: %s", out)
	}

	// An empty config marshals as null and comes back empty.
	out, err = json.Marshal(NMStateConfigSpec{})
	if err != nil {
		t.Fatal(err)
	}
	var empty NMStateConfigSpec
	if err := json.Unmarshal(out, &empty); err != nil || empty.Config.Raw != nil {
		t.Errorf("empty config round trip: %s -> %+v, %v", out, empty, err)
	}
}

// Every manifest survives decode, encode, decode unchanged: what these types
// write is what they (and so assisted-service) read.
func TestRoundTrip(t *testing.T) {
	for name, kind := range map[string]string{
		"infraenv-ztp.yaml":          "InfraEnv",
		"infraenv-late-binding.yaml": "InfraEnv",
		"agent-sno-installing.yaml":  "Agent",
		"agent-day2-worker.yaml":     "Agent",
		"nmstateconfig.yaml":         "NMStateConfig",
	} {
		t.Run(name, func(t *testing.T) {
			first := newObject(t, kind)
			load(t, name, first, kind)
			js, err := json.Marshal(first)
			if err != nil {
				t.Fatal(err)
			}
			second := newObject(t, kind)
			if err := decodeStrict(js, second); err != nil {
				t.Fatalf("re-decoding %s: %v", js, err)
			}
			if !equality.Semantic.DeepEqual(first, second) {
				t.Errorf("round trip changed the object:\nfirst:  %+v\nsecond: %+v", first, second)
			}
		})
	}
}

func newObject(t *testing.T, kind string) runtime.Object {
	t.Helper()
	s := runtime.NewScheme()
	if err := AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	obj, err := s.New(GroupVersion.WithKind(kind))
	if err != nil {
		t.Fatal(err)
	}
	return obj
}

// A field spelt differently from upstream must fail decoding, including a
// difference in case only.
func TestMisspeltFieldsRejected(t *testing.T) {
	for _, tc := range []struct{ file, from, to string }{
		{"agent-sno-installing.yaml", "  installation_disk_id:", "  installationDiskID:"},
		{"agent-sno-installing.yaml", "ipV4Addresses:", "ipv4Addresses:"},
		{"agent-sno-installing.yaml", "productName:", "productname:"},
		{"agent-sno-installing.yaml", "currentStage:", "stage:"},
		{"agent-day2-worker.yaml", "deprovision_info:", "deprovisionInfo:"},
		{"infraenv-ztp.yaml", "discoveryIgnitionURL:", "discoveryIgnitionUrl:"},
		{"infraenv-ztp.yaml", "nmStateConfigLabelSelector:", "nmstateConfigLabelSelector:"},
		{"infraenv-ztp.yaml", "ipxeScriptType:", "iPXEScriptType:"},
		{"nmstateconfig.yaml", `    macAddress: "b8:ce`, `    macaddress: "b8:ce`},
	} {
		data, err := os.ReadFile(filepath.Join("testdata", tc.file))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(data), tc.from) {
			t.Fatalf("%s does not contain %q", tc.file, tc.from)
		}
		bad := strings.Replace(string(data), tc.from, tc.to, 1)
		var obj runtime.Object = &Agent{}
		switch {
		case strings.HasPrefix(tc.file, "infraenv"):
			obj = &InfraEnv{}
		case strings.HasPrefix(tc.file, "nmstate"):
			obj = &NMStateConfig{}
		}
		if err := decodeStrict([]byte(bad), obj); err == nil {
			t.Errorf("%s with %q accepted", tc.file, tc.to)
		}
	}
}

func TestDeepCopyIsIndependent(t *testing.T) {
	var a Agent
	load(t, "agent-sno-installing.yaml", &a, "Agent")
	c := a.DeepCopy()
	c.Status.Inventory.Interfaces[0].IPv4Addresses[0] = "192.0.2.1/24"
	c.Status.ValidationsInfo["network"][0].Status = "failure"
	c.Spec.NodeLabels["x"] = "y"
	if a.Status.Inventory.Interfaces[0].IPv4Addresses[0] != "10.16.231.10/24" ||
		a.Status.ValidationsInfo["network"][0].Status != "success" || len(a.Spec.NodeLabels) != 1 {
		t.Error("DeepCopy shares memory with the original Agent")
	}

	var nc NMStateConfig
	load(t, "nmstateconfig.yaml", &nc, "NMStateConfig")
	ncc := nc.DeepCopy()
	ncc.Spec.Config.Raw[0] = '#'
	if nc.Spec.Config.Raw[0] == '#' {
		t.Error("DeepCopy shares the NMStateConfig document")
	}
}
