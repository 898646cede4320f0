package day1

import (
	"context"
	"fmt"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/paritylab/paritylab/framework"
	controlplanev1 "github.com/paritylab/paritylab/providers/controlplane/api/v1alpha3"
	"github.com/paritylab/paritylab/results"
	"github.com/paritylab/paritylab/scenarios"
)

// capiFlow installs the cluster through Cluster API core, our agent
// providers and upstream CAPM3.
type capiFlow struct {
	in   scenarios.Input
	run  *scenarios.Run
	ns   string
	site scenarios.CAPISite
	// workload reaches the installed cluster through the kubeconfig
	// Secret the control-plane provider wrote.
	workload    client.Client
	workloadCfg *rest.Config
}

func (f *capiFlow) start(ctx context.Context) {
	hub := f.in.Lab.Client()
	ns, err := framework.CreateNamespace(ctx, hub, "day1-capi")
	Expect(err).NotTo(HaveOccurred())
	f.ns = ns.Name
	f.run.SetCluster(f.ns)
	Expect(f.run.Record(ctx, f.in.Lab.Hub.GetRESTConfig(), []string{f.ns}, append(hubAssistedWatches(f.ns),
		framework.Watch{Resource: scenarios.CAPIMachines, Namespace: f.ns, Role: "machine"},
		framework.Watch{Resource: scenarios.CAPIMachineSets, Namespace: f.ns, Role: "machine-set"},
		framework.Watch{Resource: scenarios.CAPIMachineDeploys, Namespace: f.ns},
		framework.Watch{Resource: scenarios.Metal3Machines, Namespace: f.ns},
	)...)).To(Succeed())
}

// hubAssistedWatches are the hub objects of the assisted flow, which both
// flows go through (the CAPI providers write them too).
func hubAssistedWatches(ns string) []framework.Watch {
	return []framework.Watch{
		{Resource: scenarios.BareMetalHosts, Namespace: ns, Role: "host"},
		{Resource: scenarios.Agents, Namespace: ns, Role: "agent"},
		{Resource: scenarios.AgentClusterInstalls, Namespace: ns, Role: "cluster-install"},
		{Resource: scenarios.ClusterDeployments, Namespace: ns, Role: "cluster"},
	}
}

func (f *capiFlow) install(ctx context.Context) {
	hub := f.in.Lab.Client()
	f.site = scenarios.CAPISite{Namespace: f.ns, Name: f.ns, ControlPlane: controlPlaneReplicas, Workers: workerReplicas,
		Version: version(f.in.Config), ReleaseRepository: f.in.CAPI.ReleaseRepository, Image: f.in.CAPI.Image,
		PullSecret: pullSecret, SSHKey: f.in.SSHKey}

	By("adding the hosts as BareMetalHosts labelled with the role the Metal3MachineTemplates select")
	var claims []framework.HostClaim
	for _, h := range hostNames() {
		role := scenarios.RoleWorker
		if h.role == "master" {
			role = scenarios.RoleControlPlane
		}
		claims = append(claims, framework.HostClaim{Namespace: f.ns, Name: h.name, Labels: map[string]string{scenarios.HostRoleLabel: role}})
	}
	_, err := f.in.Hosts.Claim(ctx, claims...)
	Expect(err).NotTo(HaveOccurred())
	By("writing the Cluster, Metal3Cluster, templates, OpenshiftAssistedControlPlane (3 replicas) and MachineDeployment (2 replicas)")
	for _, o := range f.site.Manifests() {
		Expect(hub.Create(ctx, o)).To(Succeed(), "create %T %s", o, o.GetName())
	}
	waitControlPlaneAgents(ctx, f.in, f.ns)
	f.run.Reach(milestoneAgents)

	By("waiting for the control-plane provider to publish the admin kubeconfig")
	raw := waitKubeconfigUsable(ctx, f.in, f.kubeconfig, func(Gomega) {})
	f.run.Reach(milestoneKubeconfig)

	f.workloadCfg, err = clientcmd.RESTConfigFromKubeConfig(raw)
	Expect(err).NotTo(HaveOccurred())
	f.workload, err = client.New(f.workloadCfg, client.Options{Scheme: f.in.Lab.Scheme()})
	Expect(err).NotTo(HaveOccurred())
	Expect(f.run.Record(ctx, f.workloadCfg, nil, scenarios.NodeIdentities)).To(Succeed())
	waitNodesReady(ctx, f.in, f.workload, controlPlaneReplicas+workerReplicas)
	f.run.Reach(milestoneNodes)
	f.waitMachinesRunning(ctx, controlPlaneReplicas+workerReplicas)
	f.run.Reach(milestoneMachines)

	By("checking the control plane reports initialized")
	cp := &controlplanev1.OpenshiftAssistedControlPlane{}
	Expect(hub.Get(ctx, client.ObjectKey{Namespace: f.ns, Name: f.site.Name}, cp)).To(Succeed())
	Expect(cp.Status.Initialization.ControlPlaneInitialized).To(HaveValue(BeTrue()), "conditions: %v", cp.Status.Conditions)
	f.in.Clusters.Put(&scenarios.Cluster{Flow: results.FlowCAPI, Namespace: f.ns, Name: f.site.Name,
		Workload: f.workload, WorkloadConfig: f.workloadCfg, Site: &f.site})
}

// waitMachinesRunning: n Machines Running, each linked to its Node by
// CAPI core (nodeRef) through the metal3:// providerID.
func (f *capiFlow) waitMachinesRunning(ctx context.Context, n int) {
	By(fmt.Sprintf("waiting for %d Machines Running with nodeRefs", n))
	iv := interval(f.in, "wait-machines-running")
	Eventually(func(g Gomega) {
		list := &clusterv1.MachineList{}
		g.Expect(f.in.Lab.Client().List(ctx, list, client.InNamespace(f.ns))).To(Succeed())
		g.Expect(list.Items).To(HaveLen(n))
		for _, m := range list.Items {
			g.Expect(m.Status.Phase).To(Equal(string(clusterv1.MachinePhaseRunning)), "Machine %s", m.Name)
			g.Expect(m.Status.NodeRef.IsDefined()).To(BeTrue(), "Machine %s nodeRef", m.Name)
			g.Expect(m.Spec.ProviderID).To(HavePrefix("metal3://"), "Machine %s", m.Name)
		}
		scenarios.ExpectCAPIMachineSetsSettled(ctx, g, f.in.Lab.Client(), f.ns, nil)
	}).WithContext(ctx).WithTimeout(iv.Timeout).WithPolling(iv.Polling).Should(Succeed())
}

// kubeconfig is the admin kubeconfig the control-plane provider
// published: the Cluster's <name>-kubeconfig Secret.
func (f *capiFlow) kubeconfig(ctx context.Context) ([]byte, error) {
	secret := &corev1.Secret{}
	if err := f.in.Lab.Client().Get(ctx, client.ObjectKey{Namespace: f.ns, Name: f.site.KubeconfigSecret()}, secret); err != nil {
		return nil, err
	}
	return secret.Data["value"], nil
}

// finish makes the flow's observation: the hub's hosts of the flow.
func (f *capiFlow) finish(ctx context.Context, failed bool, why string) *results.Observation {
	in := scenarios.FinishInput{Failed: failed, Err: why, Workload: f.workload, WorkloadConfig: f.workloadCfg, AgentNamespace: f.ns,
		HostLists: []scenarios.HostList{{Client: f.in.Lab.Client(), Namespace: f.ns}}}
	return f.run.Finish(ctx, f.in.Lab, in)
}

// waitControlPlaneAgents waits until the control-plane hosts' agents in
// ns registered with role master and were approved.
func waitControlPlaneAgents(ctx context.Context, in scenarios.Input, ns string) {
	scenarios.WaitControlPlaneAgents(ctx, scenarios.WaitAgentsInput{Hub: in.Lab.Client(), Namespace: ns, Count: controlPlaneReplicas,
		Interval: interval(in, "wait-agents-registered")})
}
