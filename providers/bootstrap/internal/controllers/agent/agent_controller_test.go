package agent_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	bootstrapv1 "github.com/paritylab/paritylab/providers/bootstrap/api/v1alpha2"
	"github.com/paritylab/paritylab/providers/bootstrap/internal/ignition"
	agentv1 "github.com/paritylab/paritylab/providers/thirdparty/agentinstall/v1beta1"
)

const timeout = 20 * time.Second

type fixture struct {
	t       *testing.T
	g       *WithT
	ns      string
	cluster *clusterv1.Cluster
	machine *clusterv1.Machine
	config  *bootstrapv1.OpenshiftAssistedConfig
}

// newFixture makes a Machine with its config and the InfraEnv the config
// controller would have made for it.
func newFixture(t *testing.T, controlPlane bool, spec bootstrapv1.OpenshiftAssistedConfigSpec) *fixture {
	t.Parallel()
	ns := env.Namespace(t)
	f := &fixture{t: t, g: NewWithT(t), ns: ns, cluster: env.Cluster(t, ns, "c", true)}
	f.machine = env.Machine(t, f.cluster, "m", controlPlane)
	f.config = env.BootstrapConfig(t, ns, "m", "c", f.machine, spec)
	ie := &agentv1.InfraEnv{
		ObjectMeta: metav1.ObjectMeta{Name: "m", Namespace: ns, OwnerReferences: []metav1.OwnerReference{
			*metav1.NewControllerRef(f.config, bootstrapv1.GroupVersion.WithKind("OpenshiftAssistedConfig")),
			{APIVersion: clusterv1.GroupVersion.String(), Kind: "Machine", Name: "m", UID: f.machine.UID},
		}},
		Spec: agentv1.InfraEnvSpec{
			ClusterRef:    &agentv1.ClusterReference{Name: "c", Namespace: ns},
			PullSecretRef: &corev1.LocalObjectReference{Name: "c-pull-secret"},
		},
	}
	env.Create(t, ie)
	return f
}

// registerHost creates the Agent a host booting InfraEnv infraEnv becomes.
func (f *fixture) registerHost(name, infraEnv string) *agentv1.Agent {
	a := &agentv1.Agent{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: f.ns, Labels: map[string]string{agentv1.InfraEnvNameLabel: infraEnv}},
		Spec:       agentv1.AgentSpec{Role: agentv1.HostRoleAutoAssign},
	}
	env.Create(f.t, a)
	return a
}

func (f *fixture) agent(name string) *agentv1.Agent {
	a := &agentv1.Agent{}
	f.g.Expect(env.Client.Get(context.Background(), client.ObjectKey{Namespace: f.ns, Name: name}, a)).To(Succeed())
	return a
}

func (f *fixture) eventuallyApproved(name string) *agentv1.Agent {
	f.t.Helper()
	f.g.Eventually(func() bool { return f.agent(name).Spec.Approved }, timeout).Should(BeTrue(), "Agent %s should be approved", name)
	return f.agent(name)
}

func (f *fixture) consistentlyUnapproved(name string) {
	f.t.Helper()
	f.g.Consistently(func() bool { return f.agent(name).Spec.Approved }, 2*time.Second, 200*time.Millisecond).
		Should(BeFalse(), "Agent %s must stay unapproved", name)
}

// override decodes the Agent's ignition override.
func override(g *WithT, a *agentv1.Agent) (files map[string]string, units []string) {
	var cfg struct {
		Ignition struct{ Version string }
		Storage  struct {
			Files []struct {
				Path     string
				Contents struct{ Source string }
			}
		}
		Systemd struct{ Units []struct{ Name string } }
	}
	g.Expect(json.Unmarshal([]byte(a.Spec.IgnitionConfigOverrides), &cfg)).To(Succeed())
	g.Expect(cfg.Ignition.Version).To(Equal(ignition.Version))
	files = map[string]string{}
	for _, f := range cfg.Storage.Files {
		_, b64, _ := strings.Cut(f.Contents.Source, "base64,")
		raw, err := base64.StdEncoding.DecodeString(b64)
		g.Expect(err).NotTo(HaveOccurred())
		files[f.Path] = string(raw)
	}
	for _, u := range cfg.Systemd.Units {
		units = append(units, u.Name)
	}
	return files, units
}

func TestApproval(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name         string
		controlPlane bool
		spec         bootstrapv1.OpenshiftAssistedConfigSpec
		role         agentv1.HostRole
		hostname     string
		kubeletEnv   string
	}{
		{name: "control-plane Machine", controlPlane: true, role: agentv1.HostRoleMaster},
		{
			name: "worker with node registration overrides",
			spec: bootstrapv1.OpenshiftAssistedConfigSpec{NodeRegistration: bootstrapv1.NodeRegistrationOptions{
				Name: "worker-0.example.com", KubeletExtraLabels: []string{"node-role.kubernetes.io/infra=", "rack=r1"},
				ProviderID: "metal3://ns/host-0/m",
			}},
			role: agentv1.HostRoleWorker, hostname: "worker-0.example.com",
			kubeletEnv: "CUSTOM_KUBELET_LABELS=node-role.kubernetes.io/infra=,rack=r1\nKUBELET_PROVIDERID=metal3://ns/host-0/m\n",
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, tc.controlPlane, tc.spec)
			f.registerHost("host-a", "m")
			a := f.eventuallyApproved("host-a")
			g := f.g
			g.Expect(a.Spec.Role).To(Equal(tc.role))
			g.Expect(a.Spec.Hostname).To(Equal(tc.hostname))
			g.Expect(a.Spec.ClusterDeploymentName).To(Equal(&agentv1.ClusterReference{Name: "c", Namespace: f.ns}))
			// As CAPOA: the kubelet registers with the labels; the
			// Agent's node labels (applied after join) stay the user's.
			g.Expect(a.Spec.NodeLabels).To(BeEmpty())
			// As CAPOA: no label or annotation of the provider's own.
			g.Expect(a.Annotations).To(BeEmpty())
			g.Expect(a.Labels).NotTo(HaveKey(clusterv1.ClusterNameLabel))
			files, units := override(g, a)
			g.Expect(units).To(ContainElement("capi-bootstrap-sentinel.service"), "the node writes Cluster API's bootstrap sentinel")
			if tc.kubeletEnv == "" {
				g.Expect(files).NotTo(HaveKey(ignition.KubeletEnvPath))
			} else {
				g.Expect(files).To(HaveKeyWithValue(ignition.KubeletEnvPath, tc.kubeletEnv))
			}
		})
	}
}

// As CAPOA does, the config's kernel arguments reach the installed
// system too: the Agent's installer args carry them for coreos-installer
// ("[]" for none); one without operation is appended.
func TestKernelArgumentsBecomeInstallerArgs(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		kargs []bootstrapv1.KernelArgument
		want  []string
	}{
		{name: "none", want: []string{}},
		{name: "append, delete and no operation", kargs: []bootstrapv1.KernelArgument{
			{Operation: "append", Value: "console=ttyS0"}, {Operation: "delete", Value: "quiet"}, {Value: "nosmt"}},
			want: []string{"--append-karg", "console=ttyS0", "--delete-karg", "quiet", "--append-karg", "nosmt"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, false, bootstrapv1.OpenshiftAssistedConfigSpec{KernelArguments: tc.kargs})
			f.registerHost("host-a", "m")
			a := f.eventuallyApproved("host-a")
			var got []string
			f.g.Expect(json.Unmarshal([]byte(a.Spec.InstallerArgs), &got)).To(Succeed(), "installerArgs %q", a.Spec.InstallerArgs)
			f.g.Expect(got).To(Equal(tc.want))
		})
	}
}

// The label CAPM3 finds a Node by is resolved on the node from its config
// drive: the override carries boot units that do it before the kubelet.
func TestKubeletLabelFromConfigDriveMetadata(t *testing.T) {
	f := newFixture(t, false, bootstrapv1.OpenshiftAssistedConfigSpec{NodeRegistration: bootstrapv1.NodeRegistrationOptions{
		KubeletExtraLabels: []string{"metal3.io/uuid=$METADATA_UUID"},
	}})
	f.registerHost("host-a", "m")
	files, units := override(f.g, f.eventuallyApproved("host-a"))
	f.g.Expect(units).To(ContainElements("capi-metadata-env.service", "capi-kubelet-env.service"))
	f.g.Expect(files).NotTo(HaveKey(ignition.KubeletEnvPath), "written at boot, once the metadata is read")
	f.g.Expect(files).To(ContainElement(ContainSubstring("CUSTOM_KUBELET_LABELS=metal3.io/uuid=${METADATA_UUID}")))
}

// CAPOA gives the kubelet no provider ID unless the config names one: the
// Machine's (set by CAPM3 once it found the Node) is not taken.
func TestNoProviderIDFromTheMachine(t *testing.T) {
	f := newFixture(t, false, bootstrapv1.OpenshiftAssistedConfigSpec{})
	f.g.Expect(env.Update(client.ObjectKeyFromObject(f.machine), f.machine, func() { f.machine.Spec.ProviderID = "metal3://ns/host/m" }, false)).To(Succeed())
	f.registerHost("host-a", "m")
	files, _ := override(f.g, f.eventuallyApproved("host-a"))
	f.g.Expect(files).NotTo(HaveKey(ignition.KubeletEnvPath))
}

func TestExactlyOneAgentPerMachine(t *testing.T) {
	f := newFixture(t, true, bootstrapv1.OpenshiftAssistedConfigSpec{})
	f.registerHost("host-a", "m")
	f.eventuallyApproved("host-a")

	By(t, "a second host registering from the same InfraEnv")
	f.registerHost("host-b", "m")
	f.consistentlyUnapproved("host-b")
	f.g.Expect(f.agent("host-a").Spec.Approved).To(BeTrue())

	By(t, "the approved host going away: the other becomes the Machine's host")
	f.g.Expect(env.Client.Delete(context.Background(), f.agent("host-a"))).To(Succeed())
	f.eventuallyApproved("host-b")
}

func TestSimultaneousRegistrationApprovesOldest(t *testing.T) {
	f := newFixture(t, true, bootstrapv1.OpenshiftAssistedConfigSpec{})
	// Registered within the same second: the name breaks the tie.
	for _, name := range []string{"host-c", "host-a", "host-b"} {
		f.registerHost(name, "m")
	}
	f.eventuallyApproved("host-a")
	f.g.Consistently(func() int {
		list := &agentv1.AgentList{}
		f.g.Expect(env.Client.List(context.Background(), list, client.InNamespace(f.ns))).To(Succeed())
		n := 0
		for _, a := range list.Items {
			if a.Spec.Approved {
				n++
			}
		}
		return n
	}, 2*time.Second, 100*time.Millisecond).Should(Equal(1), "exactly one Agent per Machine is approved")
}

func TestLeftAlone(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name  string
		setup func(f *fixture) (infraEnv string)
	}{
		{
			name: "Agent of an InfraEnv no config owns (another flow's)",
			setup: func(f *fixture) string {
				env.Create(f.t, &agentv1.InfraEnv{
					ObjectMeta: metav1.ObjectMeta{Name: "ztp", Namespace: f.ns},
					Spec:       agentv1.InfraEnvSpec{PullSecretRef: &corev1.LocalObjectReference{Name: "ps"}},
				})
				return "ztp"
			},
		},
		{
			name: "Cluster paused",
			setup: func(f *fixture) string {
				f.g.Expect(env.Update(client.ObjectKeyFromObject(f.cluster), f.cluster, func() { f.cluster.Spec.Paused = ptr.To(true) }, false)).To(Succeed())
				return "m"
			},
		},
		{
			name: "Machine being deleted",
			setup: func(f *fixture) string {
				f.g.Expect(env.Update(client.ObjectKeyFromObject(f.machine), f.machine, func() { f.machine.Finalizers = []string{"test/hold"} }, false)).To(Succeed())
				f.g.Expect(env.Client.Delete(context.Background(), f.machine)).To(Succeed())
				return "m"
			},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, true, bootstrapv1.OpenshiftAssistedConfigSpec{})
			f.registerHost("host-a", tc.setup(f))
			f.consistentlyUnapproved("host-a")
			f.g.Expect(f.agent("host-a").Spec.Role).To(Equal(agentv1.HostRoleAutoAssign))
		})
	}
}

func TestInstallingAgentIsNotChanged(t *testing.T) {
	f := newFixture(t, true, bootstrapv1.OpenshiftAssistedConfigSpec{})
	a := f.registerHost("host-a", "m")
	f.eventuallyApproved("host-a")
	f.g.Expect(env.Update(client.ObjectKeyFromObject(a), a, func() { a.Status.DebugInfo.State = agentv1.AgentStateInstallingInProgress }, true)).To(Succeed())
	f.g.Expect(env.Update(client.ObjectKeyFromObject(a), a, func() { a.Spec.Hostname = "set-by-hand" }, false)).To(Succeed())
	f.g.Expect(env.Update(client.ObjectKeyFromObject(f.machine), f.machine, func() { f.machine.Spec.ProviderID = "metal3://late" }, false)).To(Succeed())
	f.g.Consistently(func() string { return f.agent("host-a").Spec.Hostname }, 2*time.Second, 200*time.Millisecond).
		Should(Equal("set-by-hand"), "an installing host's settings no longer matter and are left alone")
}

// By logs a step of a test.
func By(t *testing.T, step string) { t.Helper(); t.Log("STEP: " + step) }
