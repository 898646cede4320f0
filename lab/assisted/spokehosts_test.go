package assisted

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	bmov1alpha1 "github.com/metal3-io/baremetal-operator/apis/metal3.io/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	agentv1beta1 "github.com/paritylab/paritylab/providers/thirdparty/agentinstall/v1beta1"
)

// Only hosts whose hub BareMetalHost the BMAC manages (InfraEnv label) are
// recorded in the spoke's machine API after the install; hosts a CAPI
// provider's Metal3Machine consumed, and agents without a host, are not.
func TestDay1HostsAreZTPHostsOnly(t *testing.T) {
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

// A ZTP host added to an installed cluster gets, once its agent installed
// it, a spoke BareMetalHost of its name and a Machine <cd>-<bmh>, and only
// then is its hub BareMetalHost detached. A day-2 host without the
// InfraEnv label is no business of the BMAC.
func TestDay2ZTPHostRecordedInSpoke(t *testing.T) {
	rec := &recordingSpokes{}
	h := startHubWith(t, rec)
	ns := h.namespace(t)
	h.infraEnv(t, ns, &agentv1beta1.ClusterReference{Name: "site-cd", Namespace: ns})
	ctx := context.Background()
	bmh := h.bmh(t, ns, "extra-0", "52:54:00:00:30:01", map[string]string{agentv1beta1.InfraEnvNameLabel: "site"})
	other := h.bmh(t, ns, "capi-9", "52:54:00:00:30:02", nil)
	h.agent(t, installedAgent(ns, "extra-0", "worker-extra", agentv1beta1.HostRoleWorker, agentv1beta1.HostKindAddToExistingClusterHost))
	h.agent(t, installedAgent(ns, "capi-9", "worker-capi", agentv1beta1.HostRoleWorker, agentv1beta1.HostKindAddToExistingClusterHost))

	h.eventually(t, "the hub BareMetalHost detached", func() bool {
		_ = h.c.Get(ctx, client.ObjectKeyFromObject(bmh), bmh)
		return bmh.Annotations[detachedAnnotation] != ""
	})
	calls := rec.calls()
	if len(calls) == 0 {
		t.Fatal("detached before the spoke got its BareMetalHost and Machine")
	}
	c := calls[0]
	if c.machine != "site-cd-extra-0" || c.host.BareMetalHost != "extra-0" || c.host.Hostname != "worker-extra" ||
		c.host.Role != agentv1beta1.HostRoleWorker || c.host.BootMACAddress != "52:54:00:00:30:01" || c.key.Name != "site-cd" {
		t.Errorf("spoke got %+v", c)
	}
	time.Sleep(2 * time.Second)
	_ = h.c.Get(ctx, client.ObjectKeyFromObject(other), other)
	if other.Annotations[detachedAnnotation] != "" || slices.ContainsFunc(rec.calls(), func(c spokeCall) bool { return c.host.BareMetalHost == "capi-9" }) {
		t.Errorf("BMAC acted on a host without the InfraEnv label: annotations %v, calls %+v", other.Annotations, rec.calls())
	}
}

func (h *hub) bmh(t *testing.T, ns, name, mac string, labels map[string]string) *bmov1alpha1.BareMetalHost {
	t.Helper()
	b := &bmov1alpha1.BareMetalHost{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: labels},
		Spec: bmov1alpha1.BareMetalHostSpec{BootMACAddress: mac, Online: true}}
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
}

func (r *recordingSpokes) Create(context.Context, ClusterKey, string) (Spoke, error) { return nil, nil }
func (r *recordingSpokes) Get(key ClusterKey) Spoke                                  { return &recordingSpoke{r: r, key: key} }
func (r *recordingSpokes) Delete(context.Context, ClusterKey) error                  { return nil }

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

func (s *recordingSpoke) AddInstalledHost(_ context.Context, machine string, host InstalledHost) error {
	s.r.mu.Lock()
	defer s.r.mu.Unlock()
	s.r.log = append(s.r.log, spokeCall{key: s.key, machine: machine, host: host})
	return nil
}
