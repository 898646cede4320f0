package assisted

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	bmov1alpha1 "github.com/metal3-io/baremetal-operator/apis/metal3.io/v1alpha1"
	configv1 "github.com/openshift/api/config/v1"
	hivev1 "github.com/openshift/hive/apis/hive/v1"
	"github.com/openshift/hive/apis/hive/v1/agent"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	agentv1beta1 "github.com/paritylab/paritylab/providers/thirdparty/agentinstall/v1beta1"
	hiveextv1beta1 "github.com/paritylab/paritylab/providers/thirdparty/hiveextensions/v1beta1"
)

// Only hosts whose hub BareMetalHost the BMAC manages (InfraEnv label) are
// recorded in the spoke's machine API after the install; hosts a CAPI
// provider's Metal3Machine consumed, and agents without a host, are not.
func TestDay1HostsAreZTPHostsOnly(t *testing.T) {
	t.Parallel()
	h := startHub(t)
	ns := h.namespace(t)
	h.bmh(t, ns, "ztp-0", "52:54:00:00:20:01", map[string]string{agentv1beta1.InfraEnvNameLabel: "site"})
	h.bmh(t, ns, "ztp-1", "52:54:00:00:20:02", map[string]string{agentv1beta1.InfraEnvNameLabel: "site"})
	h.bmh(t, ns, "capi-0", "52:54:00:00:20:03", nil)
	in := &install{agents: []agentv1beta1.Agent{
		installedAgent(ns, "ztp-0", "node-a", agentv1beta1.HostRoleMaster, agentv1beta1.HostKindHost),
		installedAgent(ns, "ztp-1", "node-b", agentv1beta1.HostRoleWorker, agentv1beta1.HostKindHost),
		installedAgent(ns, "capi-0", "node-c", agentv1beta1.HostRoleMaster, agentv1beta1.HostKindHost),
		installedAgent(ns, "", "node-d", agentv1beta1.HostRoleWorker, agentv1beta1.HostKindHost),
	}}
	var got []InstalledHost
	h.eventually(t, "the two ZTP hosts", func() bool {
		var err error
		got, err = h.svc.day1Hosts(context.Background(), in)
		return err == nil && len(got) == 2
	})
	want := []InstalledHost{
		{BareMetalHost: "node-a", Hostname: "node-a", Role: agentv1beta1.HostRoleMaster, BootMACAddress: "52:54:00:00:20:01"},
		{BareMetalHost: "node-b", Hostname: "node-b", Role: agentv1beta1.HostRoleWorker, BootMACAddress: "52:54:00:00:20:02"},
	}
	for i := range want {
		g := got[i]
		if g.BareMetalHost != want[i].BareMetalHost || g.Hostname != want[i].Hostname || g.Role != want[i].Role || g.BootMACAddress != want[i].BootMACAddress {
			t.Errorf("host %d: %+v, want %+v", i, g, want[i])
		}
		if g.Hardware == nil || g.Hardware.Hostname != g.Hostname || g.Hardware.CPU.Count != 16 || len(g.Hardware.NIC) != 1 || g.Hardware.NIC[0].IP != "" {
			t.Errorf("host %d hardware %+v: want the inventory, host name, no IPs", i, g.Hardware)
		}
	}
	// A CAPI-provider install: none of its hosts carries the InfraEnv label.
	capi := &install{agents: in.agents[2:]}
	if none, err := h.svc.day1Hosts(context.Background(), capi); err != nil || len(none) != 0 {
		t.Errorf("CAPI-provider hosts recorded: %+v, %v", none, err)
	}
}

// A ZTP host added to an installed BareMetal-platform cluster has its
// hub BareMetalHost labelled for backup; as soon as its agent installs
// it gets, once, a spoke BareMetalHost of its name and a Machine
// <cd>-<bmh> (upstream's BMAC writes them at installing, not when the
// host is done); the hub host is detached when the host reboots into
// the installed system, and paused with its status saved once the
// operator reports it detached.
// A host without the InfraEnv label is no business of the BMAC.
func TestDay2ZTPHostRecordedInSpoke(t *testing.T) {
	t.Parallel()
	rec := &recordingSpokes{}
	h := startHubWith(t, rec)
	ns := h.namespace(t)
	h.installedSite(t, ns, siteACI("10.100.254.10", "10.100.254.11", "10.100.0.0/16"))
	h.infraEnv(t, ns, &agentv1beta1.ClusterReference{Name: "site-cd", Namespace: ns})
	ctx := context.Background()
	bmh := h.bmh(t, ns, "extra-0", "52:54:00:00:30:01", map[string]string{agentv1beta1.InfraEnvNameLabel: "site"})
	other := h.bmh(t, ns, "capi-9", "52:54:00:00:30:02", nil)
	h.agent(t, boundAgent(ns, "extra-0", "worker-extra"))
	h.agent(t, installingAgent(ns, "capi-9", "worker-capi"))

	h.eventually(t, "the hub host labelled for backup", func() bool {
		_ = h.c.Get(ctx, client.ObjectKeyFromObject(bmh), bmh)
		return bmh.Labels[backupLabel] == "true"
	})
	time.Sleep(2 * time.Second)
	if calls := rec.calls(); len(calls) > 0 {
		t.Errorf("host recorded in the spoke before its agent installs: %+v", calls)
	}

	h.setAgentStage(t, ns, "agent-worker-extra", agentv1beta1.HostStageWritingImageToDisk)
	h.eventually(t, "the spoke's BareMetalHost and Machine for the installing host", func() bool { return len(rec.calls()) > 0 })
	c := rec.calls()[0]
	if c.machine != "site-cd-extra-0" || c.day2.ClusterName != "site-cd" || c.host.BareMetalHost != "extra-0" || c.host.Hostname != "worker-extra" ||
		c.host.Role != agentv1beta1.HostRoleWorker || c.host.BootMACAddress != "52:54:00:00:30:01" || c.key.Name != "site-cd" ||
		c.day2.HubSpec.BMC.Address == "" || c.host.Hardware == nil || c.host.Hardware.CPU.Count != 16 {
		t.Errorf("spoke got %+v", c)
	}
	h.eventually(t, "the hub host marked", func() bool {
		_ = h.c.Get(ctx, client.ObjectKeyFromObject(bmh), bmh)
		return bmh.Annotations[spokeCreatedAnnotation] != ""
	})
	if _, ok := bmh.Annotations[detachedAnnotation]; ok {
		t.Errorf("host detached while its agent writes the disk: %v", bmh.Annotations)
	}

	h.setAgentStage(t, ns, "agent-worker-extra", agentv1beta1.HostStageRebooting)
	h.eventually(t, "the hub host detached at Rebooting", func() bool {
		_ = h.c.Get(ctx, client.ObjectKeyFromObject(bmh), bmh)
		return bmh.Annotations[detachedAnnotation] == bmacController
	})
	if _, ok := bmh.Annotations[bmov1alpha1.PausedAnnotation]; ok {
		t.Errorf("host paused before the operator reported it detached: %v", bmh.Annotations)
	}
	// The event is recorded after the patch that the Get above saw.
	h.eventually(t, "a detach event for the host", func() bool {
		ev := h.svc.events.list(ns, "extra-0", 0)
		return slices.ContainsFunc(ev, func(e Event) bool { return strings.Contains(e.Message, "detached") })
	})
	h.setAgentStage(t, ns, "agent-worker-extra", agentv1beta1.HostStageDone)
	bmh.Status.OperationalStatus = bmov1alpha1.OperationalStatusDetached
	bmh.Status.Provisioning.State = bmov1alpha1.StateProvisioned
	if err := h.c.Status().Update(ctx, bmh); err != nil {
		t.Fatal(err)
	}
	h.eventually(t, "the hub host paused with its status saved", func() bool {
		_ = h.c.Get(ctx, client.ObjectKeyFromObject(bmh), bmh)
		saved := bmov1alpha1.BareMetalHostStatus{}
		return bmh.Annotations[bmov1alpha1.PausedAnnotation] == bmacController &&
			json.Unmarshal([]byte(bmh.Annotations[bmov1alpha1.StatusAnnotation]), &saved) == nil && saved.OperationalStatus == bmov1alpha1.OperationalStatusDetached
	})

	time.Sleep(2 * time.Second)
	_ = h.c.Get(ctx, client.ObjectKeyFromObject(other), other)
	if len(other.Annotations) != 0 || other.Labels[backupLabel] != "" || slices.ContainsFunc(rec.calls(), func(c spokeCall) bool { return c.host.BareMetalHost == "capi-9" }) {
		t.Errorf("BMAC acted on a host without the InfraEnv label: annotations %v labels %v, calls %+v", other.Annotations, other.Labels, rec.calls())
	}
	if n := len(rec.calls()); n != 1 {
		t.Errorf("the spoke got the day-2 host %d times, want once", n)
	}

	// Deleted, the host is unpaused for the bare-metal operator (whose
	// finalizer a test finalizer stands for) to finish the deletion.
	const hold = "test.paritylab.io/hold"
	patch := client.MergeFrom(bmh.DeepCopy())
	bmh.Finalizers = append(bmh.Finalizers, hold)
	if err := h.c.Patch(ctx, bmh, patch); err != nil {
		t.Fatal(err)
	}
	if err := h.c.Delete(ctx, bmh); err != nil {
		t.Fatal(err)
	}
	h.eventually(t, "the deleted host unpaused", func() bool {
		_ = h.c.Get(ctx, client.ObjectKeyFromObject(bmh), bmh)
		_, paused := bmh.Annotations[bmov1alpha1.PausedAnnotation]
		return !paused
	})
	patch = client.MergeFrom(bmh.DeepCopy())
	bmh.Finalizers = slices.DeleteFunc(bmh.Finalizers, func(f string) bool { return f == hold })
	if err := h.c.Patch(ctx, bmh, patch); err != nil {
		t.Fatal(err)
	}
}

// On platform None (here a single-node cluster) the BMAC writes no
// spoke BareMetalHost or Machine for a day-2 host.
func TestDay2ZTPHostNotRecordedOnPlatformNone(t *testing.T) {
	t.Parallel()
	rec := &recordingSpokes{}
	h := startHubWith(t, rec)
	ns := h.namespace(t)
	sno := &hiveextv1beta1.AgentClusterInstall{}
	sno.Spec.ProvisionRequirements.ControlPlaneAgents = 1
	h.installedSite(t, ns, sno)
	h.infraEnv(t, ns, &agentv1beta1.ClusterReference{Name: "site-cd", Namespace: ns})
	ctx := context.Background()
	bmh := h.bmh(t, ns, "extra-0", "52:54:00:00:31:01", map[string]string{agentv1beta1.InfraEnvNameLabel: "site"})
	h.agent(t, installingAgent(ns, "extra-0", "worker-extra"))
	h.eventually(t, "the hub host labelled for backup", func() bool {
		_ = h.c.Get(ctx, client.ObjectKeyFromObject(bmh), bmh)
		return bmh.Labels[backupLabel] == "true"
	})
	time.Sleep(2 * time.Second)
	if calls := rec.calls(); len(calls) != 0 {
		t.Errorf("spoke objects written on platform None: %+v", calls)
	}
}

// installedSite writes the installed ClusterDeployment site-cd and its
// AgentClusterInstall.
func (h *hub) installedSite(t *testing.T, ns string, aci *hiveextv1beta1.AgentClusterInstall) {
	t.Helper()
	ctx := context.Background()
	cd := &hivev1.ClusterDeployment{ObjectMeta: metav1.ObjectMeta{Name: "site-cd", Namespace: ns},
		Spec: hivev1.ClusterDeploymentSpec{ClusterName: "site-cd", BaseDomain: "lab.example", Installed: true,
			ClusterInstallRef: &hivev1.ClusterInstallLocalReference{Group: "extensions.hive.openshift.io", Version: "v1beta1", Kind: "AgentClusterInstall", Name: "site-cd"},
			ClusterMetadata:   &hivev1.ClusterMetadata{ClusterID: "id", InfraID: "site-cd-x7k2p", AdminKubeconfigSecretRef: corev1.LocalObjectReference{Name: "kc"}},
			Platform:          hivev1.Platform{AgentBareMetal: &agent.BareMetalPlatform{}}}}
	aci.ObjectMeta = metav1.ObjectMeta{Name: "site-cd", Namespace: ns}
	aci.Spec.ClusterDeploymentRef = corev1.LocalObjectReference{Name: "site-cd"}
	for _, o := range []client.Object{cd, aci} {
		if err := h.c.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
}

// setAgentStage moves an Agent's install progress to stage.
func (h *hub) setAgentStage(t *testing.T, ns, name string, stage agentv1beta1.HostStage) {
	t.Helper()
	a := &agentv1beta1.Agent{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	h.updateStatus(t, a, func() { a.Status.Progress.CurrentStage = stage })
}

// updateStatus re-reads obj and writes its status as mutate changes it,
// again when a controller wrote it in between.
func (h *hub) updateStatus(t *testing.T, obj client.Object, mutate func()) {
	t.Helper()
	ctx := context.Background()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if err := h.c.Get(ctx, client.ObjectKeyFromObject(obj), obj); err != nil {
			return err
		}
		mutate()
		return h.c.Status().Update(ctx, obj)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// boundAgent is a day-2 worker Agent bound to site-cd whose install has
// not started.
func boundAgent(ns, bmh, hostname string) agentv1beta1.Agent {
	a := installedAgent(ns, bmh, hostname, agentv1beta1.HostRoleWorker, agentv1beta1.HostKindAddToExistingClusterHost)
	a.Status.Progress.CurrentStage = ""
	a.Status.DebugInfo.State = agentv1beta1.AgentStateKnown
	return a
}

// installingAgent is a day-2 worker Agent whose host writes its disk.
func installingAgent(ns, bmh, hostname string) agentv1beta1.Agent {
	a := installedAgent(ns, bmh, hostname, agentv1beta1.HostRoleWorker, agentv1beta1.HostKindAddToExistingClusterHost)
	a.Status.Progress.CurrentStage = agentv1beta1.HostStageWritingImageToDisk
	a.Status.DebugInfo.State = agentv1beta1.AgentStateInstallingInProgress
	return a
}

func (h *hub) bmh(t *testing.T, ns, name, mac string, labels map[string]string) *bmov1alpha1.BareMetalHost {
	t.Helper()
	b := &bmov1alpha1.BareMetalHost{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: labels},
		Spec: bmov1alpha1.BareMetalHostSpec{BootMACAddress: mac, Online: true,
			BMC: bmov1alpha1.BMCDetails{Address: "redfish-virtualmedia+http://127.0.0.1:8000/redfish/v1/Systems/" + name, CredentialsName: name + "-bmc"}}}
	if err := h.c.Create(context.Background(), b); err != nil {
		t.Fatal(err)
	}
	return b
}

// agent creates an Agent and writes its status, as the service does for
// a host that reported.
func (h *hub) agent(t *testing.T, a agentv1beta1.Agent) {
	t.Helper()
	ctx := context.Background()
	status := a.Status
	if err := h.c.Create(ctx, &a); err != nil {
		t.Fatal(err)
	}
	// The Agent controller writes the status too: retry on its changes.
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if err := h.c.Get(ctx, client.ObjectKeyFromObject(&a), &a); err != nil {
			return err
		}
		a.Status.Kind, a.Status.Progress, a.Status.DebugInfo, a.Status.Inventory = status.Kind, status.Progress, status.DebugInfo, status.Inventory
		return h.c.Status().Update(ctx, &a)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// installedAgent is an Agent whose host finished installing; bmh "" is
// one that no BareMetalHost booted.
func installedAgent(ns, bmh, hostname string, role agentv1beta1.HostRole, kind string) agentv1beta1.Agent {
	labels := map[string]string{agentv1beta1.InfraEnvNameLabel: "site"}
	if bmh != "" {
		labels[agentv1beta1.BareMetalHostLabel] = bmh
	}
	a := agentv1beta1.Agent{ObjectMeta: metav1.ObjectMeta{Name: "agent-" + hostname, Namespace: ns, Labels: labels},
		Spec: agentv1beta1.AgentSpec{Hostname: hostname, Role: role, Approved: true,
			ClusterDeploymentName: &agentv1beta1.ClusterReference{Name: "site-cd", Namespace: ns}}}
	a.Status.Kind = kind
	a.Status.Progress.CurrentStage = agentv1beta1.HostStageDone
	a.Status.DebugInfo.State = agentv1beta1.AgentStateInstalled
	a.Status.Inventory = agentv1beta1.HostInventory{
		Hostname: hostname,
		CPU:      agentv1beta1.HostCPU{Count: 16, Architecture: "x86_64"},
		Memory:   agentv1beta1.HostMemory{PhysicalBytes: 32 << 30, UsableBytes: 32 << 30},
		Interfaces: []agentv1beta1.HostInterface{{Name: "eth0", MacAddress: "52:54:00:00:ff:01", Flags: []string{"up"},
			IPv4Addresses: []string{"10.0.2.15/24"}, IPv6Addresses: []string{}}},
	}
	return a
}

// recordingSpokes has one installed workload cluster per key, which
// records the day-2 hosts it is given.
type recordingSpokes struct {
	mu  sync.Mutex
	log []spokeCall
}

type spokeCall struct {
	key     ClusterKey
	machine string
	host    InstalledHost
	day2    Day2Host
}

func (r *recordingSpokes) Create(context.Context, ClusterKey, configv1.Release) (Spoke, error) {
	return nil, nil
}
func (r *recordingSpokes) Get(key ClusterKey) Spoke                 { return &recordingSpoke{r: r, key: key} }
func (r *recordingSpokes) Delete(context.Context, ClusterKey) error { return nil }

func (r *recordingSpokes) calls() []spokeCall {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.log)
}

type recordingSpoke struct {
	Spoke // the rest is not used by these tests
	r     *recordingSpokes
	key   ClusterKey
}

func (s *recordingSpoke) AddInstalledHost(_ context.Context, host Day2Host) error {
	s.r.mu.Lock()
	defer s.r.mu.Unlock()
	s.r.log = append(s.r.log, spokeCall{key: s.key, machine: host.Machine, host: host.InstalledHost, day2: host})
	return nil
}
