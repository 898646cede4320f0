package openshiftassistedconfig_test

import (
	"context"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	conditionsv1 "github.com/openshift/custom-resource-status/conditions/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/cluster-api/util/conditions"

	bootstrapv1 "github.com/paritylab/paritylab/providers/bootstrap/api/v1alpha2"
	"github.com/paritylab/paritylab/providers/bootstrap/internal/controllers/openshiftassistedconfig"
	agentv1 "github.com/paritylab/paritylab/providers/thirdparty/agentinstall/v1beta1"
	hiveextv1 "github.com/paritylab/paritylab/providers/thirdparty/hiveextensions/v1beta1"
)

const timeout = 20 * time.Second

// fixture is one test's world: a namespace with a Cluster named "c".
type fixture struct {
	t       *testing.T
	g       *WithT
	ns      string
	cluster *clusterv1.Cluster
}

func newFixture(t *testing.T, provisioned bool) *fixture {
	t.Parallel()
	ns := env.Namespace(t)
	return &fixture{t: t, g: NewWithT(t), ns: ns, cluster: env.Cluster(t, ns, "c", provisioned)}
}

// machineWithConfig creates a Machine and its config, owned by it.
func (f *fixture) machineWithConfig(name string, controlPlane bool, spec bootstrapv1.OpenshiftAssistedConfigSpec) (*clusterv1.Machine, *bootstrapv1.OpenshiftAssistedConfig) {
	m := env.Machine(f.t, f.cluster, name, controlPlane)
	return m, env.BootstrapConfig(f.t, f.ns, name, f.cluster.Name, m, spec)
}

func (f *fixture) config(name string) *bootstrapv1.OpenshiftAssistedConfig {
	c := &bootstrapv1.OpenshiftAssistedConfig{}
	f.g.Expect(env.Client.Get(context.Background(), client.ObjectKey{Namespace: f.ns, Name: name}, c)).To(Succeed())
	return c
}

// eventuallyCondition waits for a condition of the config to have status
// and reason (any reason when empty), and returns the config.
func (f *fixture) eventuallyCondition(name, condition string, status metav1.ConditionStatus, reason string) *bootstrapv1.OpenshiftAssistedConfig {
	f.t.Helper()
	var c *bootstrapv1.OpenshiftAssistedConfig
	f.g.Eventually(func(g Gomega) {
		c = &bootstrapv1.OpenshiftAssistedConfig{}
		g.Expect(env.Client.Get(context.Background(), client.ObjectKey{Namespace: f.ns, Name: name}, c)).To(Succeed())
		got := conditions.Get(c, condition)
		g.Expect(got).NotTo(BeNil(), "condition %s", condition)
		g.Expect(got.Status).To(Equal(status), "condition %s: %s", condition, got.Message)
		if reason != "" {
			g.Expect(got.Reason).To(Equal(reason), "condition %s: %s", condition, got.Message)
		}
	}, timeout).Should(Succeed())
	return c
}

func (f *fixture) infraEnv(name string) (*agentv1.InfraEnv, error) {
	ie := &agentv1.InfraEnv{}
	return ie, env.Client.Get(context.Background(), client.ObjectKey{Namespace: f.ns, Name: name}, ie)
}

func (f *fixture) eventuallyInfraEnv(name string) *agentv1.InfraEnv {
	f.t.Helper()
	var ie *agentv1.InfraEnv
	f.g.Eventually(func() error {
		var err error
		ie, err = f.infraEnv(name)
		return err
	}, timeout).Should(Succeed(), "InfraEnv %s should be created", name)
	return ie
}

// consistentlyNoInfraEnv checks for a while that no InfraEnv exists.
func (f *fixture) consistentlyNoInfraEnv(name string) {
	f.t.Helper()
	f.g.Consistently(func() bool {
		_, err := f.infraEnv(name)
		return apierrors.IsNotFound(err)
	}, 2*time.Second, 200*time.Millisecond).Should(BeTrue(), "no InfraEnv %s may be created", name)
}

// discoveryImageBuilt sets the InfraEnv status as assisted-service does once
// the image is ready.
func (f *fixture) discoveryImageBuilt(name, ignitionURL string) {
	f.t.Helper()
	ie := &agentv1.InfraEnv{}
	f.g.Expect(env.Update(client.ObjectKey{Namespace: f.ns, Name: name}, ie, func() {
		ie.Status.ISODownloadURL = "http://assisted.example/images/" + name + ".iso"
		ie.Status.BootArtifacts.DiscoveryIgnitionURL = ignitionURL
		ie.Status.Conditions = []conditionsv1.Condition{{
			Type: agentv1.ConditionImageCreated, Status: corev1.ConditionTrue, Reason: agentv1.ReasonImageCreated,
			Message: "Image has been created", LastTransitionTime: metav1.Now(), LastHeartbeatTime: metav1.Now(),
		}}
	}, true)).To(Succeed())
}

func TestOwnerMachine(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name    string
		owner   func(f *fixture) client.Object
		message string
	}{
		{
			name:    "no owner yet",
			owner:   func(*fixture) client.Object { return nil },
			message: "no Machine owns this config yet",
		},
		{
			name: "owner Machine deleted while the config was queued",
			owner: func(f *fixture) client.Object {
				m := env.Machine(t, f.cluster, "gone", false)
				f.g.Expect(env.Client.Delete(context.Background(), m)).To(Succeed())
				return m
			},
			message: "does not exist",
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, true)
			env.ClusterInstall(t, f.cluster, "")
			env.BootstrapConfig(t, f.ns, "m", f.cluster.Name, tc.owner(f), bootstrapv1.OpenshiftAssistedConfigSpec{})
			c := f.eventuallyCondition("m", bootstrapv1.DataSecretAvailableCondition, metav1.ConditionFalse, bootstrapv1.WaitingForMachineReason)
			f.g.Expect(conditions.GetMessage(c, bootstrapv1.DataSecretAvailableCondition)).To(ContainSubstring(tc.message))
			f.g.Expect(conditions.IsFalse(c, bootstrapv1.ReadyCondition)).To(BeTrue(), "Ready summarises the wait")
			f.g.Expect(c.Status.Initialization.DataSecretCreated).To(BeNil())
			f.consistentlyNoInfraEnv("m")

			By(t, "deleting the config without its Machine")
			f.g.Expect(env.Client.Delete(context.Background(), c)).To(Succeed())
			f.g.Eventually(func() bool {
				err := env.Client.Get(context.Background(), client.ObjectKeyFromObject(c), c)
				return apierrors.IsNotFound(err)
			}, timeout).Should(BeTrue(), "the finalizer is released without a Machine")
		})
	}
}

func TestWaits(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name         string
		provisioned  bool
		install      string // "-" for no ClusterDeployment
		controlPlane bool
		condition    string
		reason       string
	}{
		{name: "cluster infrastructure not provisioned", provisioned: false, install: "", controlPlane: true,
			condition: bootstrapv1.DataSecretAvailableCondition, reason: bootstrapv1.WaitingForClusterInfrastructureReason},
		{name: "no ClusterDeployment yet", provisioned: true, install: "-", controlPlane: true,
			condition: bootstrapv1.InfraEnvReadyCondition, reason: bootstrapv1.WaitingForClusterDeploymentReason},
		{name: "worker while the control plane installs", provisioned: true, install: hiveextv1.ClusterStateInstalling,
			condition: bootstrapv1.InfraEnvReadyCondition, reason: bootstrapv1.WaitingForInstallToAddHostsReason},
		{name: "worker while the install finalizes", provisioned: true, install: hiveextv1.ClusterStateFinalizing,
			condition: bootstrapv1.InfraEnvReadyCondition, reason: bootstrapv1.WaitingForInstallToAddHostsReason},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, tc.provisioned)
			if tc.install != "-" {
				env.ClusterInstall(t, f.cluster, tc.install)
			}
			f.machineWithConfig("m", tc.controlPlane, bootstrapv1.OpenshiftAssistedConfigSpec{})
			c := f.eventuallyCondition("m", tc.condition, metav1.ConditionFalse, tc.reason)
			f.g.Expect(conditions.GetReason(c, bootstrapv1.ReadyCondition)).NotTo(BeEmpty())
			f.g.Expect(conditions.IsTrue(c, bootstrapv1.ReadyCondition)).To(BeFalse())
			f.consistentlyNoInfraEnv("m")
		})
	}
}

func TestDayTwoGateOpens(t *testing.T) {
	f := newFixture(t, true)
	_, aci := env.ClusterInstall(t, f.cluster, hiveextv1.ClusterStateInstalling)
	f.machineWithConfig("worker", false, bootstrapv1.OpenshiftAssistedConfigSpec{})
	f.machineWithConfig("master", true, bootstrapv1.OpenshiftAssistedConfigSpec{})

	f.eventuallyInfraEnv("master")
	f.eventuallyCondition("worker", bootstrapv1.InfraEnvReadyCondition, metav1.ConditionFalse, bootstrapv1.WaitingForInstallToAddHostsReason)
	f.consistentlyNoInfraEnv("worker")

	By(t, "the install reaching adding-hosts")
	env.SetInstallState(t, aci, hiveextv1.ClusterStateAddingHosts)
	f.eventuallyInfraEnv("worker")
}

func TestWorkerBeforeInstallJoinsDayOne(t *testing.T) {
	f := newFixture(t, true)
	env.ClusterInstall(t, f.cluster, hiveextv1.ClusterStateInsufficient)
	f.machineWithConfig("worker", false, bootstrapv1.OpenshiftAssistedConfigSpec{})
	f.eventuallyInfraEnv("worker")
}

func TestInfraEnvAndDataSecret(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name       string
		spec       bootstrapv1.OpenshiftAssistedConfigSpec
		pullSecret string
	}{
		{
			name:       "pull secret from the ClusterDeployment",
			spec:       bootstrapv1.OpenshiftAssistedConfigSpec{SSHAuthorizedKey: sshKey, AdditionalNTPSources: []string{"ntp.example.com"}},
			pullSecret: "c-pull-secret",
		},
		{
			name: "pull secret, proxy and kernel arguments from the config",
			spec: bootstrapv1.OpenshiftAssistedConfigSpec{
				PullSecretRef:   &corev1.LocalObjectReference{Name: "mine"},
				Proxy:           &bootstrapv1.Proxy{HTTPProxy: "http://proxy.example.com:3128", NoProxy: ".example.com"},
				KernelArguments: []bootstrapv1.KernelArgument{{Operation: "append", Value: "console=ttyS0"}},
				CPUArchitecture: "aarch64",
			},
			pullSecret: "mine",
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, true)
			cd, _ := env.ClusterInstall(t, f.cluster, "")
			m, _ := f.machineWithConfig("m0", true, tc.spec)

			ie := f.eventuallyInfraEnv("m0")
			g := f.g
			g.Expect(ie.Spec.ClusterRef).To(Equal(&agentv1.ClusterReference{Name: cd.Name, Namespace: cd.Namespace}))
			g.Expect(ie.Spec.PullSecretRef.Name).To(Equal(tc.pullSecret))
			g.Expect(ie.Spec.SSHAuthorizedKey).To(Equal(tc.spec.SSHAuthorizedKey))
			g.Expect(ie.Spec.AdditionalNTPSources).To(Equal(tc.spec.AdditionalNTPSources))
			if tc.spec.Proxy != nil {
				g.Expect(ie.Spec.Proxy).To(Equal(&agentv1.Proxy{HTTPProxy: tc.spec.Proxy.HTTPProxy, NoProxy: tc.spec.Proxy.NoProxy}))
			}
			g.Expect(ie.Spec.KernelArguments).To(HaveLen(len(tc.spec.KernelArguments)))
			wantArch := tc.spec.CPUArchitecture
			if wantArch == "" {
				wantArch = "x86_64"
			}
			g.Expect(ie.Spec.CPUArchitecture).To(Equal(wantArch), "the CRD default reaches the InfraEnv")
			g.Expect(ie.Labels).To(HaveKeyWithValue(clusterv1.ClusterNameLabel, "c"))
			g.Expect(ie.OwnerReferences).To(ConsistOf(
				And(HaveField("Kind", "OpenshiftAssistedConfig"), HaveField("Name", "m0"), HaveField("Controller", HaveValue(BeTrue()))),
				And(HaveField("Kind", "Machine"), HaveField("Name", m.Name), HaveField("UID", m.UID)),
			))
			c := f.eventuallyCondition("m0", bootstrapv1.InfraEnvReadyCondition, metav1.ConditionFalse, bootstrapv1.WaitingForDiscoveryImageReason)
			g.Eventually(func() string { return f.config("m0").Status.InfraEnvName }, timeout).Should(Equal("m0"))
			g.Expect(c.Status.Initialization.DataSecretCreated).To(BeNil(), "no bootstrap data before the discovery image")

			By(t, "assisted-service building the discovery image")
			f.discoveryImageBuilt("m0", ignitionURL("m0"))
			f.eventuallyCondition("m0", bootstrapv1.ReadyCondition, metav1.ConditionTrue, "")
			g.Eventually(func() *bool { return f.config("m0").Status.Initialization.DataSecretCreated }, timeout).Should(HaveValue(BeTrue()))
			c = f.config("m0")
			g.Expect(c.Status.DataSecretName).To(Equal("m0"))
			g.Expect(c.Status.ObservedGeneration).To(Equal(c.Generation))
			g.Expect(conditions.IsTrue(c, bootstrapv1.InfraEnvReadyCondition)).To(BeTrue())
			g.Expect(conditions.IsTrue(c, bootstrapv1.DataSecretAvailableCondition)).To(BeTrue())

			secret := &corev1.Secret{}
			g.Expect(env.Client.Get(context.Background(), client.ObjectKey{Namespace: f.ns, Name: "m0"}, secret)).To(Succeed())
			g.Expect(secret.Type).To(Equal(clusterv1.ClusterSecretType))
			g.Expect(string(secret.Data["format"])).To(Equal("ignition"))
			g.Expect(string(secret.Data["value"])).To(ContainSubstring(`"data:,m0"`), "the discovery ignition served for the InfraEnv")
			g.Expect(secret.Labels).To(HaveKeyWithValue(clusterv1.ClusterNameLabel, "c"))
			g.Expect(metav1.IsControlledBy(secret, c)).To(BeTrue(), "the config controls its data Secret")
		})
	}
}

func TestDiscoveryProblems(t *testing.T) {
	t.Parallel()
	t.Run("image creation failed", func(t *testing.T) {
		f := newFixture(t, true)
		env.ClusterInstall(t, f.cluster, "")
		f.machineWithConfig("m", true, bootstrapv1.OpenshiftAssistedConfigSpec{})
		f.eventuallyInfraEnv("m")
		ie := &agentv1.InfraEnv{}
		f.g.Expect(env.Update(client.ObjectKey{Namespace: f.ns, Name: "m"}, ie, func() {
			ie.Status.Conditions = []conditionsv1.Condition{{
				Type: agentv1.ConditionImageCreated, Status: corev1.ConditionFalse, Reason: agentv1.ReasonImageCreationError,
				Message: "Failed to create image: pull secret is invalid", LastTransitionTime: metav1.Now(), LastHeartbeatTime: metav1.Now(),
			}}
		}, true)).To(Succeed())
		c := f.eventuallyCondition("m", bootstrapv1.InfraEnvReadyCondition, metav1.ConditionFalse, bootstrapv1.DiscoveryImageFailedReason)
		f.g.Expect(conditions.GetMessage(c, bootstrapv1.InfraEnvReadyCondition)).To(ContainSubstring("pull secret is invalid"))
	})
	t.Run("ignition endpoint failing, then answering", func(t *testing.T) {
		f := newFixture(t, true)
		env.ClusterInstall(t, f.cluster, "")
		f.machineWithConfig("m", true, bootstrapv1.OpenshiftAssistedConfigSpec{})
		f.eventuallyInfraEnv("m")
		f.discoveryImageBuilt("m", ignitionServer.URL+"/broken")
		c := f.eventuallyCondition("m", bootstrapv1.DataSecretAvailableCondition, metav1.ConditionFalse, bootstrapv1.DiscoveryIgnitionUnavailableReason)
		f.g.Expect(conditions.GetMessage(c, bootstrapv1.DataSecretAvailableCondition)).To(ContainSubstring("500"))
		f.discoveryImageBuilt("m", ignitionURL("m"))
		f.g.Eventually(func() *bool { return f.config("m").Status.Initialization.DataSecretCreated }, 45*time.Second).Should(HaveValue(BeTrue()))
	})
}

func TestPause(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name    string
		pause   func(f *fixture, c *bootstrapv1.OpenshiftAssistedConfig)
		unpause func(f *fixture, c *bootstrapv1.OpenshiftAssistedConfig)
		message string
	}{
		{
			name: "Cluster spec.paused",
			pause: func(f *fixture, _ *bootstrapv1.OpenshiftAssistedConfig) {
				f.g.Expect(env.Update(client.ObjectKeyFromObject(f.cluster), f.cluster, func() { f.cluster.Spec.Paused = ptr.To(true) }, false)).To(Succeed())
			},
			unpause: func(f *fixture, _ *bootstrapv1.OpenshiftAssistedConfig) {
				f.g.Expect(env.Update(client.ObjectKeyFromObject(f.cluster), f.cluster, func() { f.cluster.Spec.Paused = nil }, false)).To(Succeed())
			},
			message: "Cluster spec.paused",
		},
		{
			name: "paused annotation",
			pause: func(f *fixture, c *bootstrapv1.OpenshiftAssistedConfig) {
				c.Annotations = map[string]string{clusterv1.PausedAnnotation: ""}
			},
			unpause: func(f *fixture, c *bootstrapv1.OpenshiftAssistedConfig) {
				f.g.Expect(env.Update(client.ObjectKeyFromObject(c), c, func() { delete(c.Annotations, clusterv1.PausedAnnotation) }, false)).To(Succeed())
			},
			message: "cluster.x-k8s.io/paused annotation",
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, true)
			env.ClusterInstall(t, f.cluster, "")
			m := env.Machine(t, f.cluster, "m", true)
			c := &bootstrapv1.OpenshiftAssistedConfig{
				ObjectMeta: metav1.ObjectMeta{Name: "m", Namespace: f.ns, Labels: map[string]string{clusterv1.ClusterNameLabel: "c"},
					OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(m, clusterv1.GroupVersion.WithKind("Machine"))}},
			}
			tc.pause(f, c)
			env.Create(t, c)
			c = f.eventuallyCondition("m", clusterv1.PausedCondition, metav1.ConditionTrue, clusterv1.PausedReason)
			f.g.Expect(conditions.GetMessage(c, clusterv1.PausedCondition)).To(ContainSubstring(tc.message))
			f.consistentlyNoInfraEnv("m")
			f.g.Expect(c.Finalizers).To(BeEmpty(), "a paused config is not touched")

			By(t, "unpausing")
			tc.unpause(f, c)
			f.eventuallyCondition("m", clusterv1.PausedCondition, metav1.ConditionFalse, clusterv1.NotPausedReason)
			f.eventuallyInfraEnv("m")
		})
	}
}

// A deleted config removes its InfraEnv and nothing else: the Agents that
// booted it are the garbage collector's to delete (their owner reference
// to the InfraEnv; this test's API server runs no collector), so that
// assisted-service, finding their InfraEnv gone, leaves their Nodes to
// CAPI.
func TestDeleteRemovesInfraEnvOnly(t *testing.T) {
	f := newFixture(t, true)
	env.ClusterInstall(t, f.cluster, "")
	_, c := f.machineWithConfig("m", true, bootstrapv1.OpenshiftAssistedConfigSpec{})
	f.eventuallyInfraEnv("m")
	ctx := context.Background()
	agent := &agentv1.Agent{
		ObjectMeta: metav1.ObjectMeta{Name: "host-a", Namespace: f.ns, Labels: map[string]string{agentv1.InfraEnvNameLabel: "m"}},
		Spec:       agentv1.AgentSpec{Role: agentv1.HostRoleAutoAssign},
	}
	env.Create(t, agent)
	other := &agentv1.Agent{
		ObjectMeta: metav1.ObjectMeta{Name: "host-b", Namespace: f.ns, Labels: map[string]string{agentv1.InfraEnvNameLabel: "someone-elses"}},
		Spec:       agentv1.AgentSpec{Role: agentv1.HostRoleAutoAssign},
	}
	env.Create(t, other)
	f.g.Eventually(func() []string { return f.config("m").Finalizers }, timeout).Should(ContainElement(openshiftassistedconfig.Finalizer))

	f.g.Expect(env.Client.Delete(ctx, c)).To(Succeed())
	f.g.Eventually(func() bool {
		return apierrors.IsNotFound(env.Client.Get(ctx, client.ObjectKeyFromObject(c), c))
	}, timeout).Should(BeTrue(), "the config goes once its InfraEnv is removed")
	_, err := f.infraEnv("m")
	f.g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "the InfraEnv is deleted")
	for _, a := range []*agentv1.Agent{agent, other} {
		f.g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(a), a)).To(Succeed())
		f.g.Expect(a.DeletionTimestamp.IsZero()).To(BeTrue(), "Agent %s deleted by the provider", a.Name)
	}
}

// By logs a step of a test.
func By(t *testing.T, step string) { t.Helper(); t.Log("STEP: " + step) }

const sshKey = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl test@example"
