package labsuite

import (
	"context"
	"time"

	bmov1alpha1 "github.com/metal3-io/baremetal-operator/apis/metal3.io/v1alpha1"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	hypershiftv1beta1 "github.com/openshift/hypershift/api/hypershift/v1beta1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/paritylab/paritylab/framework"
	"github.com/paritylab/paritylab/lab/hypershift"
	agentv1beta1 "github.com/paritylab/paritylab/providers/thirdparty/agentinstall/v1beta1"
)

// The HyperShift flow's objects: the HostedCluster's namespace, the
// namespace of the Agents its NodePools may use, and the host it uses.
const (
	hsClusters = "hs-clusters"
	hsHardware = "hs-hardware"
	hsCluster  = "hc1"
	hsPool     = "np1"
	hsHost     = "hs-worker-0"
	hsPoolKey  = "hypershift-pool"
)

// A hosted cluster's NodePool adds a lab host as a node through CAPI, as
// HyperShift's agent platform does: the host boots its InfraEnv's
// discovery image (late binding), the NodePool's AgentMachine binds its
// Agent, assisted-service installs it with a pointer Ignition to the
// hosted cluster's ignition server, its kubelet bootstraps through a CSR
// and it joins the hosted cluster; the running cluster then migrates to
// HyperShift's private CAPI types without its node noticing; scaled to
// zero by the cluster's own CAPI, the Agent is unbound and the host boots
// discovery again.
var _ = Describe("HyperShift hosted clusters on the agent platform", Label("lab", "hypershift"), func() {
	It("scales a NodePool 0 to 1, migrates to private types, and scales to 0 over a lab host", func(ctx SpecContext) {
		c := shared.lab.Client()
		labHost := shared.lab.Inventory().Hosts[workerPoolHosts[0]].Name
		original := &bmov1alpha1.BareMetalHost{}
		Expect(c.Get(ctx, client.ObjectKey{Namespace: shared.lab.Inventory().Namespace, Name: labHost}, original)).To(Succeed())
		start := time.Now()

		By("creating the HostedCluster, the Agents' InfraEnv and a NodePool of 0")
		hc := hostedClusterManifests(ctx)
		DeferCleanup(func(ctx SpecContext) { removeHostedCluster(ctx, original) }, NodeTimeout(10*time.Minute))
		cpns := hypershift.ControlPlaneNamespace(hc)
		Eventually(func(g Gomega) {
			g.Expect(c.Get(ctx, client.ObjectKeyFromObject(hc), hc)).To(Succeed())
			g.Expect(meta.IsStatusConditionTrue(hc.Status.Conditions, string(hypershiftv1beta1.HostedClusterAvailable))).To(BeTrue())
			g.Expect(hc.Status.IgnitionEndpoint).NotTo(BeEmpty())
		}).WithContext(ctx).WithTimeout(2 * time.Minute).WithPolling(time.Second).Should(Succeed())
		hosted, err := client.New(shared.lab.HostedCluster(hsClusters, hsCluster).RESTConfig(), client.Options{})
		Expect(err).NotTo(HaveOccurred())
		AddReportEntry("HyperShift: hosted cluster available", time.Since(start).Round(time.Second).String())

		By("booting the host into the InfraEnv's discovery image: its Agent registers unbound")
		moveLabHost(ctx, labHost, hostPlacement{Namespace: hsHardware, Name: hsHost, Online: true,
			Labels:      map[string]string{agentv1beta1.InfraEnvNameLabel: hsHardware},
			Annotations: map[string]string{"bmac.agent-install.openshift.io/hostname": hsHost}})
		agent := waitAgentState(ctx, agentv1beta1.AgentStateKnownUnbound, 8*time.Minute)
		Expect(agent.Spec.Approved).To(BeTrue(), "the BMAC approves the Agent of a BareMetalHost")
		AddReportEntry("HyperShift: agent known-unbound", time.Since(start).Round(time.Second).String())

		By("scaling the NodePool to 1: the host installs and joins the hosted cluster")
		scaleNodePool(ctx, 1)
		Eventually(func(g Gomega) {
			node := &corev1.Node{}
			g.Expect(hosted.Get(ctx, client.ObjectKey{Name: hsHost}, node)).To(Succeed())
			g.Expect(nodeReady(node)).To(Equal(corev1.ConditionTrue))
			g.Expect(node.Spec.ProviderID).To(Equal("agent://" + agent.Name))
			g.Expect(node.Labels).To(HaveKeyWithValue(hypershift.NodePoolLabel, hsPool))
		}).WithContext(ctx).WithTimeout(15 * time.Minute).WithPolling(3 * time.Second).Should(Succeed())
		AddReportEntry("HyperShift: node joined", time.Since(start).Round(time.Second).String())
		Eventually(func(g Gomega) {
			machines := &clusterv1.MachineList{}
			g.Expect(c.List(ctx, machines, client.InNamespace(cpns))).To(Succeed())
			g.Expect(machines.Items).To(HaveLen(1))
			g.Expect(machines.Items[0].Status.NodeRef.Name).To(Equal(hsHost))
			g.Expect(machines.Items[0].Status.Phase).To(Equal(string(clusterv1.MachinePhaseRunning)))
			np := &hypershiftv1beta1.NodePool{}
			g.Expect(c.Get(ctx, client.ObjectKey{Namespace: hsClusters, Name: hsPool}, np)).To(Succeed())
			g.Expect(np.Status.Replicas).To(BeEquivalentTo(1))
			a := &agentv1beta1.Agent{}
			g.Expect(c.Get(ctx, client.ObjectKeyFromObject(agent), a)).To(Succeed())
			g.Expect(a.Status.DebugInfo.State).To(Equal(agentv1beta1.AgentStateAddedToExistingCluster))
			g.Expect(a.Spec.ClusterDeploymentName).NotTo(BeNil())
			g.Expect(a.Spec.ClusterDeploymentName.Namespace).To(Equal(cpns))
		}).WithContext(ctx).WithTimeout(3 * time.Minute).WithPolling(3 * time.Second).Should(Succeed())

		migrateToPrivateTypes(ctx, hc, hosted, agent)
		AddReportEntry("HyperShift: migrated to private CAPI types", time.Since(start).Round(time.Second).String())

		By("scaling the NodePool to 0 through the cluster's own CAPI: the Machine goes, the Agent is unbound and the host boots discovery again")
		scaleNodePool(ctx, 0)
		Eventually(func(g Gomega) {
			g.Expect(capiObjects(ctx, g, hypershiftPrivateGroup, "Machine", cpns)).To(BeEmpty())
		}).WithContext(ctx).WithTimeout(5 * time.Minute).WithPolling(3 * time.Second).Should(Succeed())
		agent = waitAgentState(ctx, agentv1beta1.AgentStateKnownUnbound, 10*time.Minute)
		Expect(agent.Spec.ClusterDeploymentName).To(BeNil())
		AddReportEntry("HyperShift: agent unbound again", time.Since(start).Round(time.Second).String())
	}, SpecTimeout(40*time.Minute))
})

// hypershiftPrivateGroup is where HyperShift's private CAPI types live.
const hypershiftPrivateGroup = "cluster.hypershift.openshift.io"

// migrateToPrivateTypes migrates the running hosted cluster from
// cluster.x-k8s.io to HyperShift's private types and checks that its node
// noticed nothing: Ready all along, the same Node, the same Machine name
// and node reference (now in the private group), the Agent still bound to
// the same ClusterDeployment, nothing left in cluster.x-k8s.io.
func migrateToPrivateTypes(ctx context.Context, hc *hypershiftv1beta1.HostedCluster, hosted client.Client, agent *agentv1beta1.Agent) {
	c := shared.lab.Client()
	cpns := hypershift.ControlPlaneNamespace(hc)
	By("migrating the running hosted cluster to HyperShift's private CAPI types: its node notices nothing")
	nodeBefore := &corev1.Node{}
	Expect(hosted.Get(ctx, client.ObjectKey{Name: hsHost}, nodeBefore)).To(Succeed())
	agentBefore := &agentv1beta1.Agent{}
	Expect(c.Get(ctx, client.ObjectKeyFromObject(agent), agentBefore)).To(Succeed())
	Expect(agentBefore.Spec.ClusterDeploymentName).NotTo(BeNil())
	machinesBefore := &clusterv1.MachineList{}
	Expect(c.List(ctx, machinesBefore, client.InNamespace(cpns))).To(Succeed())
	Expect(machinesBefore.Items).To(HaveLen(1))
	Expect(c.Get(ctx, client.ObjectKeyFromObject(hc), hc)).To(Succeed())
	patch := client.MergeFrom(hc.DeepCopy())
	if hc.Annotations == nil {
		hc.Annotations = map[string]string{}
	}
	hc.Annotations[hypershift.MigrateCAPITypesAnnotation] = "private"
	Expect(c.Patch(ctx, hc, patch)).To(Succeed())

	notReady := 0
	Eventually(func(g Gomega) {
		node := &corev1.Node{}
		if err := hosted.Get(ctx, client.ObjectKey{Name: hsHost}, node); err != nil || nodeReady(node) != corev1.ConditionTrue {
			notReady++
		}
		g.Expect(c.Get(ctx, client.ObjectKeyFromObject(hc), hc)).To(Succeed())
		g.Expect(hc.Annotations).NotTo(HaveKey(hypershift.MigrationFailedAnnotation))
		g.Expect(hc.Annotations).To(HaveKeyWithValue(hypershift.PrivateCAPITypesAnnotation, "true"))
		g.Expect(hc.Annotations).NotTo(HaveKey(hypershift.MigrationInProgressAnnotation))
	}).WithContext(ctx).WithTimeout(8 * time.Minute).WithPolling(2 * time.Second).Should(Succeed())
	Expect(notReady).To(BeZero(), "the hosted node was seen not Ready during the migration")

	Eventually(func(g Gomega) {
		machines := capiObjects(ctx, g, hypershiftPrivateGroup, "Machine", cpns)
		g.Expect(machines).To(HaveLen(1))
		g.Expect(machines[0].GetName()).To(Equal(machinesBefore.Items[0].Name))
		ref, _, _ := unstructured.NestedString(machines[0].Object, "status", "nodeRef", "name")
		phase, _, _ := unstructured.NestedString(machines[0].Object, "status", "phase")
		g.Expect(ref).To(Equal(hsHost))
		g.Expect(phase).To(Equal(string(clusterv1.MachinePhaseRunning)))
		g.Expect(capiObjects(ctx, g, clusterv1.GroupVersion.Group, "Machine", cpns)).To(BeEmpty())
	}).WithContext(ctx).WithTimeout(2 * time.Minute).WithPolling(3 * time.Second).Should(Succeed())
	node := &corev1.Node{}
	Expect(hosted.Get(ctx, client.ObjectKey{Name: hsHost}, node)).To(Succeed())
	Expect(node.UID).To(Equal(nodeBefore.UID), "the Node was replaced")
	Expect(nodeReady(node)).To(Equal(corev1.ConditionTrue))
	a := &agentv1beta1.Agent{}
	Expect(c.Get(ctx, client.ObjectKeyFromObject(agent), a)).To(Succeed())
	Expect(a.Spec.ClusterDeploymentName).To(Equal(agentBefore.Spec.ClusterDeploymentName))
	Expect(a.Labels).To(Equal(agentBefore.Labels), "the Agent's binding labels (agentMachineRef)")
	Expect(a.Status.DebugInfo.State).To(Equal(agentv1beta1.AgentStateAddedToExistingCluster))
}

// capiObjects lists a CAPI core kind of a group at v1beta2 on the hub.
func capiObjects(ctx context.Context, g Gomega, group, kind, namespace string) []unstructured.Unstructured {
	l := &unstructured.UnstructuredList{}
	l.SetGroupVersionKind(schema.GroupVersionKind{Group: group, Version: "v1beta2", Kind: kind + "List"})
	g.Expect(shared.lab.Client().List(ctx, l, client.InNamespace(namespace))).To(Succeed())
	return l.Items
}

// hostedCluster is the hosted cluster as its user describes it.
func hostedCluster() framework.HostedClusterInput {
	return framework.HostedClusterInput{Namespace: hsClusters, Name: hsCluster, AgentNamespace: hsHardware,
		ReleaseImage: shared.lab.Releases()[0].Image, NodePool: hsPool, PoolLabels: map[string]string{hsPoolKey: hsPool},
		PullSecret: `{"auths":{"registry.example":{"auth":"dXNlcjpwYXNz"}}}`}
}

// hostedClusterManifests writes what a HyperShift user writes for an
// agent hosted cluster: namespaces and pull secrets, the HostedCluster,
// an InfraEnv without a cluster for the Agents, and a NodePool of none.
func hostedClusterManifests(ctx context.Context) *hypershiftv1beta1.HostedCluster {
	in := hostedCluster()
	for _, o := range framework.HostedClusterManifests(in) {
		Expect(shared.lab.Client().Create(ctx, o)).To(Succeed(), "create %T %s", o, o.GetName())
	}
	return in.HostedCluster()
}

func scaleNodePool(ctx context.Context, replicas int32) {
	c := shared.lab.Client()
	np := &hypershiftv1beta1.NodePool{}
	Expect(c.Get(ctx, client.ObjectKey{Namespace: hsClusters, Name: hsPool}, np)).To(Succeed())
	patch := client.MergeFrom(np.DeepCopy())
	np.Spec.Replicas = ptr.To(replicas)
	Expect(c.Patch(ctx, np, patch)).To(Succeed())
}

// waitAgentState waits for the one Agent of the agent namespace to reach
// state and returns it.
func waitAgentState(ctx context.Context, state string, timeout time.Duration) *agentv1beta1.Agent {
	a := &agentv1beta1.Agent{}
	Eventually(func(g Gomega) string {
		agents := &agentv1beta1.AgentList{}
		g.Expect(shared.lab.Client().List(ctx, agents, client.InNamespace(hsHardware))).To(Succeed())
		g.Expect(agents.Items).To(HaveLen(1))
		*a = agents.Items[0]
		return a.Status.DebugInfo.State
	}).WithContext(ctx).WithTimeout(timeout).WithPolling(3*time.Second).Should(Equal(state), "the host's Agent")
	return a
}

// removeHostedCluster deletes the NodePool and the HostedCluster (the
// operator tears the hosted control plane down) and gives the host back
// to the lab's pool, powered off.
func removeHostedCluster(ctx context.Context, original *bmov1alpha1.BareMetalHost) {
	c := shared.lab.Client()
	By("deleting the NodePool and the HostedCluster and handing the host back to the lab's pool")
	deleteAndWait(ctx, c, &hypershiftv1beta1.NodePool{ObjectMeta: metav1.ObjectMeta{Namespace: hsClusters, Name: hsPool}})
	deleteAndWait(ctx, c, &hypershiftv1beta1.HostedCluster{ObjectMeta: metav1.ObjectMeta{Namespace: hsClusters, Name: hsCluster}})
	hub := &bmov1alpha1.BareMetalHost{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: hsHardware, Name: hsHost}, hub); err == nil {
		powerOff(ctx, hub)
	}
	agents := &agentv1beta1.AgentList{}
	Expect(c.List(ctx, agents, client.InNamespace(hsHardware))).To(Succeed())
	for i := range agents.Items {
		deleteAndWait(ctx, c, &agents.Items[i])
	}
	deleteAndWait(ctx, c, &bmov1alpha1.BareMetalHost{ObjectMeta: metav1.ObjectMeta{Namespace: hsHardware, Name: hsHost}})
	for _, ns := range []string{hsHardware, hsClusters} {
		deleteAndWait(ctx, c, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})
	}
	restored := &bmov1alpha1.BareMetalHost{
		ObjectMeta: metav1.ObjectMeta{Name: original.Name, Namespace: original.Namespace, Labels: original.Labels, Annotations: original.Annotations},
		Spec:       *original.Spec.DeepCopy(),
	}
	Expect(client.IgnoreAlreadyExists(c.Create(ctx, restored))).To(Succeed())
}
