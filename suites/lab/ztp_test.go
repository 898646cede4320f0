package labsuite

import (
	"context"
	"fmt"
	"time"

	bmov1alpha1 "github.com/metal3-io/baremetal-operator/apis/metal3.io/v1alpha1"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	machinev1beta1 "github.com/openshift/api/machine/v1beta1"
	hivev1 "github.com/openshift/hive/apis/hive/v1"
	"github.com/openshift/hive/apis/hive/v1/agent"
	gfredfish "github.com/stmcginnis/gofish/redfish"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/paritylab/paritylab/lab/mapi"
	agentv1beta1 "github.com/paritylab/paritylab/providers/thirdparty/agentinstall/v1beta1"
	hiveextv1beta1 "github.com/paritylab/paritylab/providers/thirdparty/hiveextensions/v1beta1"
	"github.com/paritylab/paritylab/scenarios"
)

// ztpSite is the namespace and name of the ZTP cluster the specs install.
const ztpSite = "ztp-site"

// ztpSpecs install a compact three-node cluster the ZTP way, driven only by
// the manifests a ZTP user writes, and then check the installed nodes'
// lifecycle. They run last in the ordered hosts container.
func ztpSpecs() {
	var spoke client.Client

	It("installs a compact cluster from ZTP manifests: hosts boot the discovery ISO, register, install, reboot and join", func(ctx SpecContext) {
		start := time.Now()
		c := shared.lab.Client()
		By("writing the ZTP manifests: namespace, pull secret, ClusterImageSet, ClusterDeployment, AgentClusterInstall, InfraEnv")
		for _, o := range ztpManifests() {
			Expect(c.Create(ctx, o)).To(Succeed(), "create %T %s", o, o.GetName())
		}
		By("moving the lab's hosts into the site: BareMetalHosts labelled with the InfraEnv")
		for i, h := range shared.lab.Inventory().Hosts[:ztpHosts] {
			adoptHost(ctx, h.Name, fmt.Sprintf("master-%d", i))
		}

		By("waiting for three agents to register with their real inventory and be approved through their BareMetalHosts")
		Eventually(func(g Gomega) {
			agents := &agentv1beta1.AgentList{}
			g.Expect(c.List(ctx, agents, client.InNamespace(ztpSite))).To(Succeed())
			g.Expect(agents.Items).To(HaveLen(ztpHosts))
			for _, a := range agents.Items {
				g.Expect(a.Status.Inventory.CPU.Count).To(BeEquivalentTo(suiteHostSpec.VCPUs), "inventory measured in the guest")
				g.Expect(a.Status.Inventory.Memory.PhysicalBytes).To(BeNumerically(">=", int64(suiteHostSpec.MemoryMiB)<<20))
				g.Expect(a.Spec.Approved).To(BeTrue(), "BMAC approves agents of BareMetalHosts")
				g.Expect(a.Labels).To(HaveKey(agentv1beta1.BareMetalHostLabel))
			}
		}).WithContext(ctx).WithTimeout(5 * time.Minute).WithPolling(2 * time.Second).Should(Succeed())
		AddReportEntry("ZTP: agents registered", time.Since(start).Round(time.Second).String())

		By("waiting for the AgentClusterInstall to install the cluster (adding-hosts)")
		aci := &hiveextv1beta1.AgentClusterInstall{}
		Eventually(func(g Gomega) string {
			g.Expect(c.Get(ctx, client.ObjectKey{Namespace: ztpSite, Name: ztpSite}, aci)).To(Succeed())
			g.Expect(aci.Status.DebugInfo.State).NotTo(Equal(hiveextv1beta1.ClusterStateError), aci.Status.DebugInfo.StateInfo)
			return aci.Status.DebugInfo.State
		}).WithContext(ctx).WithTimeout(10 * time.Minute).WithPolling(3 * time.Second).Should(Equal(hiveextv1beta1.ClusterStateAddingHosts))
		AddReportEntry("ZTP: cluster installed", time.Since(start).Round(time.Second).String())
		Expect(aciCondition(aci, hiveextv1beta1.ConditionCompleted)).To(Equal(corev1.ConditionTrue))

		By("reaching the spoke with the admin kubeconfig the install published")
		cd := &hivev1.ClusterDeployment{}
		Expect(c.Get(ctx, client.ObjectKey{Namespace: ztpSite, Name: ztpSite}, cd)).To(Succeed())
		Expect(cd.Spec.Installed).To(BeTrue())
		Expect(cd.Spec.ClusterMetadata).NotTo(BeNil())
		Expect(cd.Spec.ClusterMetadata.InfraID).To(Equal(string(aci.UID)), "the infra ID is the service's cluster ID, as assisted-service writes it")
		Expect(cd.Spec.ClusterMetadata.AdminPasswordSecretRef).NotTo(BeNil(), "hive copies the metadata once it names the password too")
		secret := &corev1.Secret{}
		Expect(c.Get(ctx, client.ObjectKey{Namespace: ztpSite, Name: cd.Spec.ClusterMetadata.AdminKubeconfigSecretRef.Name}, secret)).To(Succeed())
		cfg, err := clientcmd.RESTConfigFromKubeConfig(secret.Data["kubeconfig"])
		Expect(err).NotTo(HaveOccurred())
		spoke, err = client.New(cfg, client.Options{})
		Expect(err).NotTo(HaveOccurred())

		By("seeing three Ready control-plane nodes")
		Eventually(func(g Gomega) {
			nodes := &corev1.NodeList{}
			g.Expect(spoke.List(ctx, nodes)).To(Succeed())
			g.Expect(nodes.Items).To(HaveLen(ztpHosts))
			for _, n := range nodes.Items {
				g.Expect(n.Name).To(HavePrefix("master-"))
				g.Expect(n.Labels).To(HaveKey("node-role.kubernetes.io/master"))
				g.Expect(nodeReady(&n)).To(Equal(corev1.ConditionTrue), "node %s", n.Name)
				g.Expect(n.Status.Addresses).To(ContainElement(HaveField("Type", corev1.NodeInternalIP)))
			}
		}).WithContext(ctx).WithTimeout(2 * time.Minute).Should(Succeed())

		By("finding the BareMetalHosts detached from the bare-metal operator")
		bmhs := &bmov1alpha1.BareMetalHostList{}
		Expect(c.List(ctx, bmhs, client.InNamespace(ztpSite))).To(Succeed())
		for _, b := range bmhs.Items {
			Expect(b.Annotations).To(HaveKey(detachedAnnotation))
		}
		AddReportEntry("ZTP: day-1 wall time", time.Since(start).Round(time.Second).String())

		By("finding the spoke's machine API objects as an assisted install on the BareMetal platform leaves them")
		expectInstalledMachineAPI(ctx)
		AddReportEntry("ZTP: spoke Machines Running", time.Since(start).Round(time.Second).String())
	}, SpecTimeout(20*time.Minute))

	It("adds a ZTP day-2 worker: its BareMetalHost joins the site's InfraEnv, the agent installs it, and the spoke gets its BareMetalHost and Machine", func(ctx SpecContext) {
		Expect(spoke).NotTo(BeNil(), "needs the cluster the previous spec installed")
		ztpDay2Spec(ctx)
	}, SpecTimeout(15*time.Minute))

	It("marks a node NotReady when its host is powered off through Redfish, and Ready again when powered on", func(ctx SpecContext) {
		Expect(spoke).NotTo(BeNil(), "needs the cluster the previous spec installed")
		bmh := &bmov1alpha1.BareMetalHost{}
		Expect(shared.lab.Client().Get(ctx, client.ObjectKey{Namespace: ztpSite, Name: "master-1"}, bmh)).To(Succeed())
		sys, _ := redfishSystem(ctx, bmh)

		Expect(sys.Reset(gfredfish.ForceOffResetType)).To(Succeed())
		start := time.Now()
		node := &corev1.Node{}
		Eventually(func(g Gomega) {
			g.Expect(spoke.Get(ctx, client.ObjectKey{Name: "master-1"}, node)).To(Succeed())
			g.Expect(nodeReady(node)).To(Equal(corev1.ConditionUnknown))
			g.Expect(node.Spec.Taints).To(ContainElement(HaveField("Key", "node.kubernetes.io/unreachable")))
		}).WithContext(ctx).WithTimeout(2 * time.Minute).Should(Succeed())
		AddReportEntry("power off to NotReady", time.Since(start).Round(time.Second).String())

		Expect(sys.Reset(gfredfish.OnResetType)).To(Succeed())
		start = time.Now()
		Eventually(func(g Gomega) {
			g.Expect(spoke.Get(ctx, client.ObjectKey{Name: "master-1"}, node)).To(Succeed())
			g.Expect(nodeReady(node)).To(Equal(corev1.ConditionTrue))
			g.Expect(node.Spec.Taints).NotTo(ContainElement(HaveField("Key", "node.kubernetes.io/unreachable")))
		}).WithContext(ctx).WithTimeout(3 * time.Minute).Should(Succeed())
		AddReportEntry("power on to Ready", time.Since(start).Round(time.Second).String())
	}, SpecTimeout(6*time.Minute))
}

func ztpManifests() []client.Object {
	ns := ztpSite
	return []client.Object{
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}},
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "pull-secret", Namespace: ns}, Type: corev1.SecretTypeDockerConfigJson,
			StringData: map[string]string{".dockerconfigjson": `{"auths":{"registry.example":{"auth":"dXNlcjpwYXNz"}}}`}},
		&hivev1.ClusterImageSet{ObjectMeta: metav1.ObjectMeta{Name: "openshift-v4.21.0"},
			Spec: hivev1.ClusterImageSetSpec{ReleaseImage: "quay.io/openshift-release-dev/ocp-release:4.21.0-x86_64"}},
		&hivev1.ClusterDeployment{ObjectMeta: metav1.ObjectMeta{Name: ns, Namespace: ns},
			Spec: hivev1.ClusterDeploymentSpec{ClusterName: ns, BaseDomain: "lab.example",
				Platform:          hivev1.Platform{AgentBareMetal: &agent.BareMetalPlatform{AgentSelector: metav1.LabelSelector{MatchLabels: map[string]string{"cluster": ns}}}},
				PullSecretRef:     &corev1.LocalObjectReference{Name: "pull-secret"},
				ClusterInstallRef: &hivev1.ClusterInstallLocalReference{Group: "extensions.hive.openshift.io", Version: "v1beta1", Kind: "AgentClusterInstall", Name: ns}}},
		&hiveextv1beta1.AgentClusterInstall{ObjectMeta: metav1.ObjectMeta{Name: ns, Namespace: ns},
			Spec: hiveextv1beta1.AgentClusterInstallSpec{
				ClusterDeploymentRef:  corev1.LocalObjectReference{Name: ns},
				ImageSetRef:           &hivev1.ClusterImageSetReference{Name: "openshift-v4.21.0"},
				ProvisionRequirements: hiveextv1beta1.ProvisionRequirements{ControlPlaneAgents: ztpHosts},
				Networking: hiveextv1beta1.Networking{
					ClusterNetwork: []hiveextv1beta1.ClusterNetworkEntry{{CIDR: "10.128.0.0/14", HostPrefix: 23}},
					ServiceNetwork: []string{"172.30.0.0/16"},
					MachineNetwork: []hiveextv1beta1.MachineNetworkEntry{{CIDR: scenarios.LabSiteNetwork.MachineNetwork}},
				},
				// A 3-host BareMetal-platform cluster needs VIPs: the
				// lab sites' (scenarios.LabSiteNetwork).
				APIVIPs: []string{scenarios.LabSiteNetwork.APIVIP}, IngressVIPs: []string{scenarios.LabSiteNetwork.IngressVIP},
				SSHPublicKey: "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIParitylabTestKeyOnlyForTheLab lab@example"}},
		&agentv1beta1.InfraEnv{ObjectMeta: metav1.ObjectMeta{Name: ns, Namespace: ns},
			Spec: agentv1beta1.InfraEnvSpec{
				ClusterRef:    &agentv1beta1.ClusterReference{Name: ns, Namespace: ns},
				PullSecretRef: &corev1.LocalObjectReference{Name: "pull-secret"},
				AgentLabels:   map[string]string{"cluster": ns}}},
	}
}

// adoptHost replaces the lab's BareMetalHost of a host with one in the ZTP
// site, labelled with the InfraEnv as a ZTP user writes it.
func adoptHost(ctx context.Context, labHost, hostname string) {
	moveLabHost(ctx, labHost, hostPlacement{Namespace: ztpSite, Name: hostname, Online: true,
		Labels:      map[string]string{agentv1beta1.InfraEnvNameLabel: ztpSite},
		Annotations: map[string]string{"bmac.agent-install.openshift.io/hostname": hostname, "bmac.agent-install.openshift.io/role": "master"}})
}

func nodeReady(n *corev1.Node) corev1.ConditionStatus {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status
		}
	}
	return ""
}

func aciCondition(aci *hiveextv1beta1.AgentClusterInstall, t hivev1.ClusterInstallConditionType) corev1.ConditionStatus {
	for _, c := range aci.Status.Conditions {
		if c.Type == t {
			return c.Status
		}
	}
	return ""
}

// expectInstalledMachineAPI checks the ZTP spoke's openshift-machine-api:
// a BareMetalHost per installed host (externally provisioned, no BMC,
// left unmanaged by the spoke's bare-metal operator) consumed by its
// control-plane Machine <infra>-master-<i>, which MAO's Machine controller
// runs and its nodelink controller links to the host's Node; the worker
// MachineSet at zero replicas (the compact site has no workers).
func expectInstalledMachineAPI(ctx context.Context) {
	wl := shared.lab.Workload(ztpSite, ztpSite)
	Expect(wl).NotTo(BeNil())
	infra := wl.InfrastructureName()
	s, err := mapi.Scheme()
	Expect(err).NotTo(HaveOccurred())
	spoke, err := client.New(wl.RESTConfig(), client.Options{Scheme: s})
	Expect(err).NotTo(HaveOccurred())
	Eventually(func(g Gomega) {
		for i := range ztpHosts {
			host := fmt.Sprintf("master-%d", i)
			m := &machinev1beta1.Machine{}
			g.Expect(spoke.Get(ctx, client.ObjectKey{Namespace: machineAPINS, Name: mapi.MasterMachineName(infra, i)}, m)).To(Succeed())
			g.Expect(m.Labels).To(HaveKeyWithValue(mapi.ClusterLabel, infra))
			g.Expect(m.Labels).To(HaveKeyWithValue(mapi.RoleLabel, "master"))
			g.Expect(m.Annotations).To(HaveKeyWithValue(mapi.HostAnnotation, machineAPINS+"/"+host))
			g.Expect(m.Status.Phase).To(HaveValue(Equal(machinev1beta1.PhaseRunning)), "machine %s", m.Name)
			g.Expect(m.Status.NodeRef).NotTo(BeNil(), "nodelink links machine %s", m.Name)
			g.Expect(m.Status.NodeRef.Name).To(Equal(host))

			bmh := &bmov1alpha1.BareMetalHost{}
			g.Expect(spoke.Get(ctx, client.ObjectKey{Namespace: machineAPINS, Name: host}, bmh)).To(Succeed())
			g.Expect(bmh.Spec.ExternallyProvisioned).To(BeTrue())
			g.Expect(bmh.Spec.BMC.Address).To(BeEmpty())
			g.Expect(bmh.Spec.BootMACAddress).NotTo(BeEmpty())
			g.Expect(bmh.Spec.ConsumerRef).To(HaveField("Name", m.Name))
			g.Expect(bmh.Status.Provisioning.State).To(Equal(bmov1alpha1.StateUnmanaged))
			g.Expect(m.Spec.ProviderID).To(HaveValue(Equal(mapi.ProviderID(bmh))))

			node := &corev1.Node{}
			g.Expect(spoke.Get(ctx, client.ObjectKey{Name: host}, node)).To(Succeed())
			g.Expect(node.Spec.ProviderID).To(Equal(mapi.ProviderID(bmh)))
			g.Expect(node.Annotations).To(HaveKeyWithValue("machine.openshift.io/machine", machineAPINS+"/"+m.Name))
		}
		ms := &machinev1beta1.MachineSet{}
		g.Expect(spoke.Get(ctx, client.ObjectKey{Namespace: machineAPINS, Name: mapi.WorkerMachineSetName(infra)}, ms)).To(Succeed())
		g.Expect(ms.Spec.Replicas).To(HaveValue(BeEquivalentTo(0)))
		all := &machinev1beta1.MachineList{}
		g.Expect(spoke.List(ctx, all, client.InNamespace(machineAPINS))).To(Succeed())
		g.Expect(all.Items).To(HaveLen(ztpHosts))
	}).WithContext(ctx).WithTimeout(3 * time.Minute).WithPolling(3 * time.Second).Should(Succeed())
}
