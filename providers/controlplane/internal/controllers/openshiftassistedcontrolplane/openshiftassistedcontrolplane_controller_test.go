package openshiftassistedcontrolplane_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	. "github.com/onsi/gomega"
	hivev1 "github.com/openshift/hive/apis/hive/v1"
	hiveagent "github.com/openshift/hive/apis/hive/v1/agent"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	controlplanev1 "github.com/paritylab/paritylab/providers/controlplane/api/v1alpha3"
	hiveextv1 "github.com/paritylab/paritylab/providers/thirdparty/hiveextensions/v1beta1"
)

func TestInstallObjects(t *testing.T) {
	f := newFixture(t, func(cp *controlplanev1.OpenshiftAssistedControlPlane) {
		cp.Spec.Config.SSHAuthorizedKey = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl a@b"
		cp.Spec.Config.MastersSchedulable = true
		cp.Spec.Config.ManifestsConfigMapRefs = []controlplanev1.ManifestsConfigMapReference{{Name: "extra"}}
		cp.Spec.Config.Capabilities = controlplanev1.Capabilities{BaselineCapability: "None", AdditionalEnabledCapabilities: []string{"baremetal"}}
		cp.Annotations[controlplanev1.InstallConfigOverrideAnnotation] = `{"fips":true}`
	})
	ctx, g := context.Background(), f.g
	for _, md := range []struct {
		name     string
		replicas int32
	}{{"md-a", 2}, {"md-b", 1}} {
		env.Create(t, &clusterv1.MachineDeployment{
			ObjectMeta: metav1.ObjectMeta{Name: md.name, Namespace: f.ns, Labels: map[string]string{clusterv1.ClusterNameLabel: "c"}},
			Spec: clusterv1.MachineDeploymentSpec{
				ClusterName: "c", Replicas: ptr.To(md.replicas),
				Selector: metav1.LabelSelector{MatchLabels: map[string]string{"md": md.name}},
				Template: clusterv1.MachineTemplateSpec{
					ObjectMeta: clusterv1.ObjectMeta{Labels: map[string]string{"md": md.name}},
					Spec: clusterv1.MachineSpec{ClusterName: "c", Bootstrap: clusterv1.Bootstrap{DataSecretName: ptr.To("x")},
						InfrastructureRef: clusterv1.ContractVersionedObjectReference{APIGroup: "infrastructure.cluster.x-k8s.io", Kind: "TestMachineTemplate", Name: "w"}},
				},
			},
		})
	}
	f.begin()

	cis := &hivev1.ClusterImageSet{}
	g.Expect(env.Client.Get(ctx, client.ObjectKey{Name: f.ns + "-c"}, cis)).To(Succeed())
	g.Expect(cis.Spec.ReleaseImage).To(Equal(digests["4.17.3"]), "the release image is resolved to a digest")
	g.Expect(cis.Labels).To(HaveKeyWithValue(clusterv1.ClusterNameLabel, "c"))

	cd := &hivev1.ClusterDeployment{}
	g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: f.ns, Name: "c"}, cd)).To(Succeed())
	g.Expect(cd.Spec.ClusterName).To(Equal("c"))
	g.Expect(cd.Spec.BaseDomain).To(Equal("example.com"))
	g.Expect(cd.Spec.Platform.AgentBareMetal).To(Equal(&hiveagent.BareMetalPlatform{}), "no agent selector, as CAPOA")
	g.Expect(cd.Labels).To(Equal(map[string]string{clusterv1.ClusterNameLabel: "c", clusterv1.MachineControlPlaneLabel: "",
		clusterv1.MachineControlPlaneNameLabel: f.get().Name, "team": "metal"}), "labelled as CAPOA labels it: the control plane's Machine labels")
	g.Expect(cd.Spec.ClusterInstallRef).To(Equal(&hivev1.ClusterInstallLocalReference{
		Group: hiveextv1.GroupName, Version: "v1beta1", Kind: "AgentClusterInstall", Name: "c"}))
	g.Expect(cd.Spec.PullSecretRef.Name).To(Equal("cp-pull-secret"), "a placeholder pull secret when none is given")
	g.Expect(metav1.IsControlledBy(cd, f.get())).To(BeTrue())
	ps := &corev1.Secret{}
	g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: f.ns, Name: "cp-pull-secret"}, ps)).To(Succeed())
	g.Expect(ps.Type).To(Equal(corev1.SecretTypeDockerConfigJson))

	aci := &hiveextv1.AgentClusterInstall{}
	g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: f.ns, Name: "c"}, aci)).To(Succeed())
	g.Expect(aci.Spec.ImageSetRef.Name).To(Equal(cis.Name))
	g.Expect(aci.Labels).To(And(HaveKeyWithValue(clusterv1.ClusterNameLabel, "c"), HaveKey(clusterv1.MachineControlPlaneLabel),
		HaveKeyWithValue(clusterv1.MachineControlPlaneNameLabel, f.get().Name),
		HaveKeyWithValue("agentclusterinstalls.agent-install.openshift.io/consumer", "OpenshiftAssistedControlPlane")), "labelled as CAPOA labels it")
	g.Expect(aci.Spec.ProvisionRequirements).To(Equal(hiveextv1.ProvisionRequirements{ControlPlaneAgents: 3, WorkerAgents: 3}),
		"worker agents are the MachineDeployments' replicas")
	g.Expect(aci.Spec.Networking.ClusterNetwork).To(Equal([]hiveextv1.ClusterNetworkEntry{{CIDR: "10.132.0.0/14", HostPrefix: 23}}))
	g.Expect(aci.Spec.Networking.ServiceNetwork).To(Equal([]string{"172.31.0.0/16"}))
	g.Expect(aci.Spec.Networking.UserManagedNetworking).To(HaveValue(BeFalse()))
	g.Expect(aci.Spec.PlatformType).To(Equal(hiveextv1.PlatformTypeBareMetal))
	g.Expect(aci.Spec.APIVIPs).To(Equal([]string{"192.0.2.5"}))
	g.Expect(aci.Spec.IngressVIPs).To(Equal([]string{"192.0.2.6"}))
	g.Expect(aci.Spec.SSHPublicKey).To(HavePrefix("ssh-ed25519 "))
	g.Expect(aci.Spec.MastersSchedulable).To(BeTrue())
	g.Expect(aci.Spec.ManifestsConfigMapRefs).To(Equal([]hiveextv1.ManifestsConfigMapReference{{Name: "extra"}}))
	var overrides map[string]any
	g.Expect(json.Unmarshal([]byte(aci.Annotations[hiveextv1.InstallConfigOverridesAnnotation]), &overrides)).To(Succeed())
	g.Expect(overrides).To(Equal(map[string]any{"fips": true, "capabilities": map[string]any{
		"baselineCapabilitySet": "None", "additionalEnabledCapabilities": []any{"baremetal"}}}))

	cp := f.get()
	g.Expect(cp.Status.ReleaseImage).To(Equal(digests["4.17.3"]))
	f.expectCondition(controlplanev1.KubernetesVersionAvailableCondition, metav1.ConditionTrue, controlplanev1.KubernetesVersionAvailableReason)
	g.Expect(cp.Status.Version).To(BeEmpty(), "status.version waits for the installed control plane")

	By(t, "a MachineDeployment scaling before the install starts")
	md := &clusterv1.MachineDeployment{}
	g.Expect(env.Update(client.ObjectKey{Namespace: f.ns, Name: "md-a"}, md, func() { md.Spec.Replicas = ptr.To[int32](5) }, false)).To(Succeed())
	f.reconcile()
	g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(aci), aci)).To(Succeed())
	g.Expect(aci.Spec.ProvisionRequirements.WorkerAgents).To(Equal(6))

	By(t, "a MachineDeployment scaling once the install runs: later workers are day-2 hosts")
	f.install(hiveextv1.ClusterStateInstalling)
	g.Expect(env.Update(client.ObjectKey{Namespace: f.ns, Name: "md-a"}, md, func() { md.Spec.Replicas = ptr.To[int32](1) }, false)).To(Succeed())
	f.reconcile()
	g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(aci), aci)).To(Succeed())
	g.Expect(aci.Spec.ProvisionRequirements.WorkerAgents).To(Equal(6))
}

func TestSingleNodeInstall(t *testing.T) {
	f := newFixture(t, withReplicas(1), func(cp *controlplanev1.OpenshiftAssistedControlPlane) {
		cp.Spec.Config.APIVIPs, cp.Spec.Config.IngressVIPs = nil, nil
	})
	f.begin()
	aci := &hiveextv1.AgentClusterInstall{}
	f.g.Expect(env.Client.Get(context.Background(), client.ObjectKey{Namespace: f.ns, Name: "c"}, aci)).To(Succeed())
	f.g.Expect(aci.Spec.ProvisionRequirements.ControlPlaneAgents).To(Equal(1))
	f.g.Expect(aci.Spec.Networking.UserManagedNetworking).To(HaveValue(BeTrue()))
	f.g.Expect(aci.Spec.PlatformType).To(Equal(hiveextv1.PlatformTypeNone))
}

func TestReleaseImage(t *testing.T) {
	t.Run("registry unreachable, then answering", func(t *testing.T) {
		f := newFixture(t, func(cp *controlplanev1.OpenshiftAssistedControlPlane) {
			cp.Annotations[controlplanev1.ReleaseImageRepositoryAnnotation] = "127.0.0.1:1/ocp/release"
		})
		f.begin()
		cis := &hivev1.ClusterImageSet{}
		err := env.Client.Get(context.Background(), client.ObjectKey{Name: f.ns + "-c"}, cis)
		f.g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "no ClusterImageSet by tag while the registry does not answer (ACM-33187): %v", err)
		aci := &hiveextv1.AgentClusterInstall{}
		err = env.Client.Get(context.Background(), client.ObjectKey{Namespace: f.ns, Name: "c"}, aci)
		f.g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "no install without a release pinned to a digest: %v", err)
		f.g.Expect(env.Client.Get(context.Background(), client.ObjectKey{Namespace: f.ns, Name: "c"}, &hivev1.ClusterDeployment{})).To(Succeed())
		c := f.expectCondition(controlplanev1.KubernetesVersionAvailableCondition, metav1.ConditionFalse, controlplanev1.ReleaseImageUnavailableReason)
		f.g.Expect(c.Message).To(ContainSubstring("127.0.0.1:1/ocp/release"))
		f.g.Expect(f.reconcile().RequeueAfter).NotTo(BeZero(), "the registry is asked again")

		By(t, "the release appearing where the spec points")
		f.update(func(cp *controlplanev1.OpenshiftAssistedControlPlane) {
			cp.Annotations[controlplanev1.ReleaseImageRepositoryAnnotation] = registry.Host() + "/" + releaseRepository
		})
		f.reconcile()
		f.g.Expect(env.Client.Get(context.Background(), client.ObjectKey{Name: f.ns + "-c"}, cis)).To(Succeed())
		f.g.Expect(cis.Spec.ReleaseImage).To(Equal(digests["4.17.3"]), "by digest before the install starts")
		f.g.Expect(env.Client.Get(context.Background(), client.ObjectKey{Namespace: f.ns, Name: "c"}, aci)).To(Succeed())
	})
	t.Run("imageRegistryRef: install manifests, not a mirror to read through", func(t *testing.T) {
		f := newFixture(t, func(cp *controlplanev1.OpenshiftAssistedControlPlane) {
			delete(cp.Annotations, controlplanev1.ReleaseImageRepositoryAnnotation)
			cp.Spec.Config.ImageRegistryRef = &corev1.LocalObjectReference{Name: "mirrors"}
			cp.Spec.Config.ManifestsConfigMapRefs = []controlplanev1.ManifestsConfigMapReference{{Name: "extra"}}
		})
		mirror := registry.Host() + "/" + releaseRepository
		env.Create(t, &corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Name: "mirrors", Namespace: f.ns},
			Data: map[string]string{controlplanev1.RegistriesConfKey: `
[[registry]]
location = "quay.io/openshift-release-dev/ocp-release"
mirror-by-digest-only = true
[[registry.mirror]]
location = "` + mirror + `"
[[registry.mirror]]
location = "` + mirror + `-tags"
pull-from-mirror = "tag-only"
`, controlplanev1.CABundleKey: "-----BEGIN CERTIFICATE-----\n"},
		})
		f.begin()
		err := env.Client.Get(context.Background(), client.ObjectKey{Name: f.ns + "-c"}, &hivev1.ClusterImageSet{})
		f.g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "the default repository is not read through the mirror: %v", err)
		c := f.expectCondition(controlplanev1.KubernetesVersionAvailableCondition, metav1.ConditionFalse, controlplanev1.ReleaseImageUnavailableReason)
		f.g.Expect(c.Message).To(ContainSubstring("quay.io/openshift-release-dev/ocp-release:4.17.3-x86_64"))

		By(t, "the annotation naming the mirror")
		f.update(func(cp *controlplanev1.OpenshiftAssistedControlPlane) {
			cp.Annotations = map[string]string{controlplanev1.ReleaseImageRepositoryAnnotation: mirror}
		})
		f.reconcile()
		cis := &hivev1.ClusterImageSet{}
		f.g.Expect(env.Client.Get(context.Background(), client.ObjectKey{Name: f.ns + "-c"}, cis)).To(Succeed())
		f.g.Expect(cis.Spec.ReleaseImage).To(Equal(digests["4.17.3"]), "by digest, in the mirror")
		aci := &hiveextv1.AgentClusterInstall{}
		f.g.Expect(env.Client.Get(context.Background(), client.ObjectKey{Namespace: f.ns, Name: "c"}, aci)).To(Succeed())
		f.g.Expect(aci.Spec.MirrorRegistryRef).To(BeNil(), "CAPOA sets no mirrorRegistryRef")
		f.g.Expect(aci.Spec.ManifestsConfigMapRefs).To(Equal([]hiveextv1.ManifestsConfigMapReference{
			{Name: "extra"}, {Name: "additional-registry-config"}}))
		manifests := &corev1.ConfigMap{}
		f.g.Expect(env.Client.Get(context.Background(), client.ObjectKey{Namespace: f.ns, Name: "additional-registry-config"}, manifests)).To(Succeed())
		f.g.Expect(manifests.Data).To(HaveKeyWithValue("image-digest-mirror-set.json", ContainSubstring(`"mirrors":["`+mirror+`"]`)))
		f.g.Expect(manifests.Data).To(HaveKeyWithValue("image-tag-mirror-set.json", ContainSubstring(`"mirrors":["`+mirror+`-tags"]`)))
		f.g.Expect(manifests.Data).To(HaveKey("additional-registry-certificate.json"))
		f.g.Expect(manifests.Data).To(HaveKeyWithValue("image-config.json", ContainSubstring(`"additionalTrustedCA":{"name":"additional-registry-certificate"}`)))
	})
	t.Run("imageRegistryRef without mirrors", func(t *testing.T) {
		f := newFixture(t, func(cp *controlplanev1.OpenshiftAssistedControlPlane) {
			cp.Annotations[controlplanev1.ReleaseImageRepositoryAnnotation] = registry.Host() + "/" + releaseRepository
			cp.Spec.Config.ImageRegistryRef = &corev1.LocalObjectReference{Name: "mirrors"}
		})
		env.Create(t, &corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Name: "mirrors", Namespace: f.ns},
			Data:       map[string]string{controlplanev1.RegistriesConfKey: "[[registry]]\nlocation = \"quay.io/a\"\n"},
		})
		_, err := f.reconcileErr()
		f.g.Expect(err).To(MatchError(ContainSubstring("spec.config.imageRegistryRef: ConfigMap mirrors: registries.conf: registry quay.io/a has no [[registry.mirror]]")))
		err = env.Client.Get(context.Background(), client.ObjectKey{Namespace: f.ns, Name: "c"}, &hiveextv1.AgentClusterInstall{})
		f.g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "no install with mirrors it cannot give the cluster: %v", err)
	})
}

func cutAt(s string) (string, string, bool) {
	for i := range s {
		if s[i] == '@' {
			return s[:i], s[i+1:], true
		}
	}
	return s, "", false
}

func TestKubeconfigAndAvailability(t *testing.T) {
	t.Parallel()
	cases := []struct {
		state       string
		available   metav1.ConditionStatus
		reason      string
		initialized bool
	}{
		{state: hiveextv1.ClusterStateInsufficient, available: metav1.ConditionFalse, reason: controlplanev1.InstallingReason},
		{state: hiveextv1.ClusterStateInstalling, available: metav1.ConditionFalse, reason: controlplanev1.InstallingReason},
		{state: hiveextv1.ClusterStateError, available: metav1.ConditionFalse, reason: controlplanev1.InstallFailedReason},
		{state: hiveextv1.ClusterStateFinalizing, available: metav1.ConditionTrue, reason: controlplanev1.AvailableReason, initialized: true},
		{state: hiveextv1.ClusterStateAddingHosts, available: metav1.ConditionTrue, reason: controlplanev1.AvailableReason, initialized: true},
	}
	for _, tc := range cases {
		t.Run(tc.state, func(t *testing.T) {
			f := newFixture(t)
			f.begin()
			f.install(tc.state)
			f.reconcile()
			f.expectCondition(controlplanev1.AvailableCondition, tc.available, tc.reason)
			cp := f.get()
			secret := &corev1.Secret{}
			err := env.Client.Get(context.Background(), client.ObjectKey{Namespace: f.ns, Name: "c-kubeconfig"}, secret)
			if !tc.initialized {
				f.g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "no kubeconfig before the install publishes one")
				f.g.Expect(cp.Status.Initialization.ControlPlaneInitialized).To(BeNil())
				f.expectCondition(controlplanev1.KubeconfigAvailableCondition, metav1.ConditionFalse, controlplanev1.WaitingForAdminKubeconfigReason)
				return
			}
			f.g.Expect(err).NotTo(HaveOccurred())
			f.g.Expect(secret.Type).To(Equal(clusterv1.ClusterSecretType))
			f.g.Expect(secret.Labels).To(HaveKeyWithValue(clusterv1.ClusterNameLabel, "c"))
			f.g.Expect(string(secret.Data["value"])).To(ContainSubstring(strings.TrimSuffix(strings.TrimPrefix(env.Config.Host, "https://"), "/")), "the install's admin kubeconfig")
			f.g.Expect(metav1.IsControlledBy(secret, cp)).To(BeTrue())
			f.g.Expect(cp.Status.Initialization.ControlPlaneInitialized).To(HaveValue(BeTrue()))
			f.expectCondition(controlplanev1.KubeconfigAvailableCondition, metav1.ConditionTrue, controlplanev1.KubeconfigAvailableReason)
		})
	}
}

func TestPause(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name  string
		pause func(f *fixture)
	}{
		{"Cluster spec.paused", func(f *fixture) {
			f.g.Expect(env.Update(client.ObjectKeyFromObject(f.cluster), f.cluster, func() { f.cluster.Spec.Paused = ptr.To(true) }, false)).To(Succeed())
		}},
		{"paused annotation", func(f *fixture) {
			f.update(func(cp *controlplanev1.OpenshiftAssistedControlPlane) {
				cp.Annotations[clusterv1.PausedAnnotation] = ""
			})
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			f.begin()
			f.g.Expect(f.machines()).To(HaveLen(1))
			tc.pause(f)
			f.reconcileN(3)
			f.expectCondition(clusterv1.PausedCondition, metav1.ConditionTrue, clusterv1.PausedReason)
			f.g.Expect(f.machines()).To(HaveLen(1), "a paused control plane creates no Machine")
		})
	}
}

func TestNoOwnerCluster(t *testing.T) {
	f := newFixture(t)
	f.g.Expect(env.Update(client.ObjectKeyFromObject(f.cp), f.cp, func() { f.cp.OwnerReferences = nil }, false)).To(Succeed())
	f.reconcileN(3)
	c := f.expectCondition(controlplanev1.AvailableCondition, metav1.ConditionFalse, controlplanev1.InstallingReason)
	f.g.Expect(c.Message).To(ContainSubstring("no Cluster owns this control plane"))
	f.g.Expect(f.machines()).To(BeEmpty())
}

func TestDelete(t *testing.T) {
	f := newFixture(t)
	f.begin()
	f.reconcileN(2)
	f.g.Expect(f.machines()).To(HaveLen(3))
	ctx := context.Background()
	f.g.Expect(env.Client.Delete(ctx, f.get())).To(Succeed())
	f.reconcileN(2)
	f.g.Expect(f.machines()).To(BeEmpty())
	f.g.Expect(apierrors.IsNotFound(env.Client.Get(ctx, client.ObjectKeyFromObject(f.cp), f.cp))).To(BeTrue(), "the finalizer is released")
	f.g.Expect(apierrors.IsNotFound(env.Client.Get(ctx, client.ObjectKey{Name: f.ns + "-c"}, &hivev1.ClusterImageSet{}))).To(BeTrue(),
		"the cluster-scoped ClusterImageSet is deleted (owner references cannot reach it)")
	f.g.Expect(apierrors.IsNotFound(env.Client.Get(ctx, client.ObjectKey{Namespace: f.ns, Name: "c"}, &hiveextv1.AgentClusterInstall{}))).To(BeTrue())
}

// By logs a step of a test.
func By(t *testing.T, step string) { t.Helper(); t.Log("STEP: " + step) }
