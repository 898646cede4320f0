package day1

import (
	"context"
	"fmt"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	machinev1beta1 "github.com/openshift/api/machine/v1beta1"
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
		Version: version(f.in.Config), ReleaseImage: releaseImage(f.in),
		PullSecret: pullSecret, SSHKey: f.in.SSHKey, Network: scenarios.LabSiteNetwork}
	By("writing the ZTP manifests: pull secret, ClusterImageSet, ClusterDeployment, AgentClusterInstall, InfraEnv")
	for _, o := range site.Manifests() {
		Expect(hub.Create(ctx, o)).To(Succeed(), "create %T %s", o, o.GetName())
	}
	// The ClusterImageSet stays with the cluster: assisted-service reads
	// it for every day-2 host (day2-scale adds one); the lab's teardown
	// removes it with the hub.

	By("adding the hosts to the InfraEnv as BareMetalHosts with BMAC role annotations")
	var claims []framework.HostClaim
	for _, h := range hostNames() {
		claims = append(claims, site.HostClaim(h.name, h.role))
	}
	_, err := f.in.Hosts.Claim(ctx, claims...)
	Expect(err).NotTo(HaveOccurred())
	waitControlPlaneAgents(ctx, f.in, f.ns)
	f.run.Reach(milestoneAgents)

	By("waiting for the install to publish the admin kubeconfig")
	raw := waitKubeconfigUsable(ctx, f.in, f.kubeconfig, func(g Gomega) {
		aci := &hiveextv1beta1.AgentClusterInstall{}
		g.Expect(hub.Get(ctx, client.ObjectKey{Namespace: f.ns, Name: f.ns}, aci)).To(Succeed())
		g.Expect(aci.Status.DebugInfo.State).NotTo(Equal(hiveextv1beta1.ClusterStateError), aci.Status.DebugInfo.StateInfo)
	})
	f.run.Reach(milestoneKubeconfig)

	f.spokeCfg, err = clientcmd.RESTConfigFromKubeConfig(raw)
	Expect(err).NotTo(HaveOccurred())
	f.spoke = f.spokeClient()
	Expect(f.run.Record(ctx, f.spokeCfg, []string{scenarios.MachineAPINamespace},
		framework.Watch{Resource: scenarios.MAPIMachines, Namespace: scenarios.MachineAPINamespace, Role: "machine"},
		framework.Watch{Resource: scenarios.MAPIMachineSets, Namespace: scenarios.MachineAPINamespace, Role: "machine-set"},
		scenarios.NodeIdentities,
	)).To(Succeed())
	waitNodesReady(ctx, f.in, f.spoke, controlPlaneReplicas+workerReplicas)
	f.run.Reach(milestoneNodes)
	f.waitMachinesRunning(ctx, controlPlaneReplicas+workerReplicas)
	f.run.Reach(milestoneMachines)

	By("checking the AgentClusterInstall reports the cluster installed")
	aci := &hiveextv1beta1.AgentClusterInstall{}
	Expect(hub.Get(ctx, client.ObjectKey{Namespace: f.ns, Name: f.ns}, aci)).To(Succeed())
	Expect(aci.Status.DebugInfo.State).To(Equal(hiveextv1beta1.ClusterStateAddingHosts))
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
		scenarios.ExpectMAPIMachineSetsSettled(ctx, g, f.spoke, scenarios.MachineAPINamespace)
	}).WithContext(ctx).WithTimeout(iv.Timeout).WithPolling(iv.Polling).Should(Succeed())
}

// kubeconfig is the admin kubeconfig the install published: the Secret
// the AgentClusterInstall's cluster metadata names. assisted-service
// names it there while the cluster installs, the same moment the CAPI
// flow's control-plane provider reads it from the same field; hive copies
// it to the ClusterDeployment only once the install completed.
func (f *classicFlow) kubeconfig(ctx context.Context) ([]byte, error) {
	aci := &hiveextv1beta1.AgentClusterInstall{}
	if err := f.in.Lab.Client().Get(ctx, client.ObjectKey{Namespace: f.ns, Name: f.ns}, aci); err != nil {
		return nil, err
	}
	if aci.Spec.ClusterMetadata == nil {
		return nil, fmt.Errorf("AgentClusterInstall %s has no cluster metadata yet", aci.Name)
	}
	secret := &corev1.Secret{}
	if err := f.in.Lab.Client().Get(ctx, client.ObjectKey{Namespace: f.ns, Name: aci.Spec.ClusterMetadata.AdminKubeconfigSecretRef.Name}, secret); err != nil {
		return nil, err
	}
	return secret.Data["kubeconfig"], nil
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
	in := scenarios.FinishInput{Failed: failed, Err: why, Workload: f.spoke, WorkloadConfig: f.spokeCfg, AgentNamespace: f.ns}
	if f.spoke != nil {
		in.HostLists = []scenarios.HostList{{Client: f.spoke, Namespace: scenarios.MachineAPINamespace}}
	}
	return f.run.Finish(ctx, f.in.Lab, in)
}
