package day1

import (
	"context"
	"fmt"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	machinev1beta1 "github.com/openshift/api/machine/v1beta1"
	hivev1 "github.com/openshift/hive/apis/hive/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/paritylab/paritylab/framework"
	hiveextv1beta1 "github.com/paritylab/paritylab/providers/thirdparty/hiveextensions/v1beta1"
	"github.com/paritylab/paritylab/results"
	"github.com/paritylab/paritylab/scenarios"
)

// classicFlow installs the cluster from ZTP manifests.
type classicFlow struct {
	in  scenarios.Input
	run *scenarios.Run
	ns  string
	// spoke reaches the installed cluster once it published its
	// kubeconfig.
	spoke    client.Client
	spokeCfg *rest.Config
}

func (f *classicFlow) start(ctx context.Context) {
	hub := f.in.Lab.Client()
	ns, err := framework.CreateNamespace(ctx, hub, "day1-mapi")
	Expect(err).NotTo(HaveOccurred())
	f.ns = ns.Name
	f.run.SetCluster(f.ns)
	Expect(f.run.Record(ctx, f.in.Lab.Hub.GetRESTConfig(), []string{f.ns}, hubAssistedWatches(f.ns)...)).To(Succeed())
}

func (f *classicFlow) install(ctx context.Context) {
	hub := f.in.Lab.Client()
	site := scenarios.ZTPSite{Namespace: f.ns, Name: f.ns, ControlPlane: controlPlaneReplicas, Workers: workerReplicas,
		Version: version(f.in.Config), ReleaseImage: releaseImage(f.in.Config),
		PullSecret: pullSecret, SSHKey: f.in.SSHKey}
	By("writing the ZTP manifests: pull secret, ClusterImageSet, ClusterDeployment, AgentClusterInstall, InfraEnv")
	for _, o := range site.Manifests() {
		Expect(hub.Create(ctx, o)).To(Succeed(), "create %T %s", o, o.GetName())
	}
	// The ClusterImageSet stays with the cluster: assisted-service reads
	// it for every day-2 host (day2-scale adds one); the lab's teardown
	// removes it with the hub.

	endProvision := f.run.Clock.Start(phaseProvision)
	By("adding the hosts to the InfraEnv as BareMetalHosts with BMAC role annotations")
	var claims []framework.HostClaim
	for _, h := range hostNames() {
		claims = append(claims, framework.HostClaim{Namespace: f.ns, Name: h.name, Online: true,
			Labels: site.HostLabels(), Annotations: scenarios.HostAnnotations(h.name, h.role)})
	}
	_, err := f.in.Hosts.Claim(ctx, claims...)
	Expect(err).NotTo(HaveOccurred())
	waitAgents(ctx, f.in, f.ns, controlPlaneReplicas+workerReplicas)
	endProvision()

	endInstall := f.run.Clock.Start(phaseInstall)
	By("waiting for the AgentClusterInstall to install the cluster")
	aci := &hiveextv1beta1.AgentClusterInstall{}
	Eventually(func(g Gomega) string {
		g.Expect(hub.Get(ctx, client.ObjectKey{Namespace: f.ns, Name: f.ns}, aci)).To(Succeed())
		g.Expect(aci.Status.DebugInfo.State).NotTo(Equal(hiveextv1beta1.ClusterStateError), aci.Status.DebugInfo.StateInfo)
		return aci.Status.DebugInfo.State
	}).WithContext(ctx).WithTimeout(interval(f.in, "wait-install").Timeout).WithPolling(interval(f.in, "wait-install").Polling).
		Should(Equal(hiveextv1beta1.ClusterStateAddingHosts))
	endInstall()

	endJoin := f.run.Clock.Start(phaseJoin)
	f.spokeCfg = f.spokeConfig(ctx)
	f.spoke = f.spokeClient()
	Expect(f.run.Record(ctx, f.spokeCfg, []string{scenarios.MachineAPINamespace},
		framework.Watch{Resource: scenarios.MAPIMachines, Namespace: scenarios.MachineAPINamespace, Role: "machine"},
		framework.Watch{Resource: scenarios.MAPIMachineSets, Namespace: scenarios.MachineAPINamespace, Role: "machine-set"},
	)).To(Succeed())
	waitNodesReady(ctx, f.in, f.spoke, controlPlaneReplicas+workerReplicas)
	f.waitMachinesRunning(ctx, controlPlaneReplicas+workerReplicas)
	endJoin()
	f.in.Clusters.Put(&scenarios.Cluster{Flow: results.FlowMAPI, Namespace: f.ns, Name: f.ns,
		Workload: f.spoke, WorkloadConfig: f.spokeCfg, ZTP: &site})
}

// waitMachinesRunning: the n Machines the installer left in the spoke
// Running, each linked to its Node (nodeRef by MAO's nodelink) through a
// baremetalhost:// providerID.
func (f *classicFlow) waitMachinesRunning(ctx context.Context, n int) {
	By(fmt.Sprintf("waiting for the spoke's %d Machines Running with nodeRefs", n))
	iv := interval(f.in, "wait-machines-running")
	Eventually(func(g Gomega) {
		list := &machinev1beta1.MachineList{}
		g.Expect(f.spoke.List(ctx, list, client.InNamespace(scenarios.MachineAPINamespace))).To(Succeed())
		g.Expect(list.Items).To(HaveLen(n))
		for _, m := range list.Items {
			g.Expect(m.Status.Phase).To(HaveValue(Equal(machinev1beta1.PhaseRunning)), "Machine %s", m.Name)
			g.Expect(m.Status.NodeRef).NotTo(BeNil(), "Machine %s nodeRef", m.Name)
			g.Expect(m.Spec.ProviderID).To(HaveValue(HavePrefix("baremetalhost:///")), "Machine %s", m.Name)
		}
	}).WithContext(ctx).WithTimeout(iv.Timeout).WithPolling(iv.Polling).Should(Succeed())
}

func (f *classicFlow) spokeConfigBytes(ctx context.Context) []byte {
	cd := &hivev1.ClusterDeployment{}
	Expect(f.in.Lab.Client().Get(ctx, client.ObjectKey{Namespace: f.ns, Name: f.ns}, cd)).To(Succeed())
	Expect(cd.Spec.ClusterMetadata).NotTo(BeNil(), "an installed ClusterDeployment has cluster metadata")
	secret := &corev1.Secret{}
	Expect(f.in.Lab.Client().Get(ctx, client.ObjectKey{Namespace: f.ns, Name: cd.Spec.ClusterMetadata.AdminKubeconfigSecretRef.Name}, secret)).To(Succeed())
	return secret.Data["kubeconfig"]
}

func (f *classicFlow) spokeConfig(ctx context.Context) *rest.Config {
	cfg, err := clientcmd.RESTConfigFromKubeConfig(f.spokeConfigBytes(ctx))
	Expect(err).NotTo(HaveOccurred())
	return cfg
}

func (f *classicFlow) spokeClient() client.Client {
	c, err := client.New(f.spokeCfg, client.Options{Scheme: f.in.Lab.Scheme()})
	Expect(err).NotTo(HaveOccurred())
	return c
}

// finish makes the flow's observation. Its hosts are the spoke's, where
// OpenShift's machine API keeps them after install (the hub's copies are
// detached and recorded as objects of the run).
func (f *classicFlow) finish(ctx context.Context, failed bool, why string) *results.Observation {
	in := scenarios.FinishInput{Failed: failed, Err: why, Workload: f.spoke}
	if f.spoke != nil {
		in.HostLists = []scenarios.HostList{{Client: f.spoke, Namespace: scenarios.MachineAPINamespace}}
	}
	return f.run.Finish(ctx, f.in.Lab.Info.RunID, in)
}
