package hypershift

import (
	"context"
	"slices"

	"github.com/go-logr/logr"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	hypershiftv1beta1 "github.com/openshift/hypershift/api/hypershift/v1beta1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/paritylab/paritylab/framework"
	"github.com/paritylab/paritylab/lab/hypershift"
	"github.com/paritylab/paritylab/lab/hypershift/apiproxy"
	capiagentv1beta1 "github.com/paritylab/paritylab/providers/agent/api/v1beta1"
	agentv1beta1 "github.com/paritylab/paritylab/providers/thirdparty/agentinstall/v1beta1"
	"github.com/paritylab/paritylab/results"
	"github.com/paritylab/paritylab/scenarios"
)

// Resources only the HyperShift flows watch.
var (
	agentMachines = capiagentv1beta1.GroupVersion.WithResource("agentmachines")
	nodePools     = hypershiftv1beta1.GroupVersion.WithResource("nodepools")
)

// hostedSide drives one hosted cluster's NodePool on the hub and reads
// its CAPI objects the way an unmodified CAPI client does: straight from
// the hub on the standard types, through an API proxy of its own on the
// private ones, so that both flows' recordings name the same kinds.
type hostedSide struct {
	in      scenarios.Input
	run     *scenarios.Run
	flow    hostedFlow
	hub     client.Client
	capiCfg *rest.Config
	// capi reads the cluster's CAPI objects (through proxy, if any).
	capi  client.Client
	proxy *apiproxy.Server
	// hosted reaches the hosted cluster once its control plane runs.
	hosted    client.Client
	hostedCfg *rest.Config
}

// prepared are the flows whose hosted cluster and pool the set-up made.
var prepared = map[results.Flow]*hostedSide{}

// prepare makes every NodePool flow's hosted cluster and boots its pool
// into discovery, those not made yet, and waits for f's to be ready: its
// control plane Available and its Agents known-unbound. It returns f's
// cluster, connected.
func prepare(ctx context.Context, in scenarios.Input, f hostedFlow) *hostedSide {
	for _, other := range flows(f.cluster.ReleaseImage) {
		if prepared[other.flow] == nil {
			s := connect(in, nil, other, false)
			s.create(ctx)
			s.bootPool(ctx)
			prepared[other.flow] = s
		}
	}
	s := prepared[f.flow]
	s.waitAvailable(ctx)
	s.connectHosted()
	s.waitAgentsDiscovered(ctx)
	return s
}

// connect makes a side of the flow's cluster for run; throughProxy reads
// its CAPI objects through an API proxy of its own.
func connect(in scenarios.Input, run *scenarios.Run, f hostedFlow, throughProxy bool) *hostedSide {
	s := &hostedSide{in: in, run: run, flow: f, hub: in.Lab.Client(), capiCfg: in.Lab.Hub.GetRESTConfig()}
	if throughProxy {
		proxy, err := apiproxy.Serve(s.capiCfg, logr.Discard())
		Expect(err).NotTo(HaveOccurred())
		s.proxy, s.capiCfg = proxy, proxy.RESTConfig()
	}
	var err error
	s.capi, err = client.New(s.capiCfg, client.Options{Scheme: in.Lab.Hub.GetScheme()})
	Expect(err).NotTo(HaveOccurred())
	return s
}

// recordHub records the cluster's CAPI objects, its Agents and hosts and
// its NodePool, as its CAPI client reads them.
func (s *hostedSide) recordHub(ctx context.Context) {
	f := s.flow
	cpns, agents := f.cluster.ControlPlaneNamespace(), f.cluster.AgentNamespace
	Expect(s.run.Record(ctx, s.capiCfg, []string{cpns, agents, f.cluster.Namespace},
		framework.Watch{Resource: scenarios.CAPIMachines, Namespace: cpns, Role: "machine"},
		framework.Watch{Resource: scenarios.CAPIMachineSets, Namespace: cpns, Role: "machine-set"},
		framework.Watch{Resource: scenarios.CAPIMachineDeploys, Namespace: cpns},
		framework.Watch{Resource: agentMachines, Namespace: cpns},
		// A NodePool takes any Agent its selector matches: which host
		// becomes which Machine is the flow's pick.
		framework.Watch{Resource: scenarios.Agents, Namespace: agents, Role: "agent", Interchangeable: true},
		framework.Watch{Resource: scenarios.BareMetalHosts, Namespace: agents, Role: "host", Interchangeable: true},
		framework.Watch{Resource: nodePools, Namespace: f.cluster.Namespace},
	)).To(Succeed())
}

// create writes the user's manifests.
func (s *hostedSide) create(ctx context.Context) {
	By("creating the HostedCluster, the Agents' InfraEnv and a NodePool of 0 (" + s.typesName() + ")")
	for _, o := range framework.HostedClusterManifests(s.flow.cluster) {
		Expect(s.hub.Create(ctx, o)).To(Succeed(), "create %T %s", o, o.GetName())
	}
}

// waitAvailable waits for the hosted control plane to be Available with
// its ignition endpoint.
func (s *hostedSide) waitAvailable(ctx context.Context) {
	iv := interval(s.in, "wait-install")
	hc := s.flow.cluster.HostedCluster()
	Eventually(func(g Gomega) {
		g.Expect(s.hub.Get(ctx, client.ObjectKeyFromObject(hc), hc)).To(Succeed())
		g.Expect(meta.IsStatusConditionTrue(hc.Status.Conditions, string(hypershiftv1beta1.HostedClusterAvailable))).To(BeTrue(), "HostedCluster Available")
		g.Expect(hc.Status.IgnitionEndpoint).NotTo(BeEmpty())
	}).WithContext(ctx).WithTimeout(iv.Timeout).WithPolling(iv.Polling).Should(Succeed())
}

// connectHosted reaches the hosted cluster's API server.
func (s *hostedSide) connectHosted() {
	Expect(s.in.Lab.Local).NotTo(BeNil(), "the hosted clusters' API servers run in the process that brought the lab up")
	api := s.in.Lab.Local.HostedCluster(s.flow.cluster.Namespace, s.flow.cluster.Name)
	Expect(api).NotTo(BeNil(), "the hosted control plane of an Available HostedCluster")
	s.hostedCfg = api.RESTConfig()
	var err error
	s.hosted, err = client.New(s.hostedCfg, client.Options{Scheme: s.in.Lab.Hub.GetScheme()})
	Expect(err).NotTo(HaveOccurred())
}

// recordNodes records the hosted cluster's Nodes.
func (s *hostedSide) recordNodes(ctx context.Context) {
	Expect(s.run.Record(ctx, s.hostedCfg, nil, scenarios.NodeIdentities)).To(Succeed())
}

// typesName says which CAPI types the flow's cluster is on.
func (s *hostedSide) typesName() string {
	if s.flow.cluster.PrivateCAPITypes {
		return "private CAPI types"
	}
	return "standard CAPI types"
}

// bootPool puts the pool's hosts in the agent namespace labelled with the
// InfraEnv: the BMAC boots them into discovery, their Agents register and
// are approved, bound to no cluster (waitAgentsDiscovered).
func (s *hostedSide) bootPool(ctx context.Context) {
	By("booting the pool's hosts into the InfraEnv's discovery image")
	var claims []framework.HostClaim
	for _, name := range poolHostNames() {
		claims = append(claims, s.flow.cluster.HostClaim(name))
	}
	_, err := s.in.Hosts.Claim(ctx, claims...)
	Expect(err).NotTo(HaveOccurred())
}

// waitAgentsDiscovered waits for the pool's Agents to be approved and
// known-unbound.
func (s *hostedSide) waitAgentsDiscovered(ctx context.Context) {
	iv := interval(s.in, "wait-agents-registered")
	Eventually(func(g Gomega) {
		agents := s.agents(ctx, g)
		g.Expect(agents).To(HaveLen(poolHosts))
		for _, a := range agents {
			g.Expect(a.Spec.Approved).To(BeTrue(), "Agent %s approved", a.Name)
			g.Expect(a.Status.DebugInfo.State).To(Equal(agentv1beta1.AgentStateKnownUnbound), "Agent %s", a.Name)
		}
	}).WithContext(ctx).WithTimeout(iv.Timeout).WithPolling(iv.Polling).Should(Succeed())
}

func (s *hostedSide) agents(ctx context.Context, g Gomega) []agentv1beta1.Agent {
	list := &agentv1beta1.AgentList{}
	g.Expect(s.hub.List(ctx, list, client.InNamespace(s.flow.cluster.AgentNamespace))).To(Succeed())
	return list.Items
}

func (s *hostedSide) scale(ctx context.Context, replicas int32) {
	np := s.flow.cluster.NodePoolOf(replicas)
	Expect(s.hub.Get(ctx, client.ObjectKeyFromObject(np), np)).To(Succeed())
	patch := client.MergeFrom(np.DeepCopy())
	np.Spec.Replicas = ptr.To(replicas)
	Expect(s.hub.Patch(ctx, np, patch)).To(Succeed())
}

// waitMachines waits for exactly n Machines, read as a CAPI client reads
// them, Running with Ready hosted Nodes of agent:// provider IDs, the
// NodePool's Nodes exactly theirs and its status at n; it returns the
// Nodes' names.
func (s *hostedSide) waitMachines(ctx context.Context, n int) []string {
	iv := interval(s.in, "wait-machines-running")
	var nodes []string
	Eventually(func(g Gomega) { nodes = s.expectMachines(ctx, g, n) }).
		WithContext(ctx).WithTimeout(iv.Timeout).WithPolling(iv.Polling).Should(Succeed())
	return nodes
}

// expectMachines is waitMachines' check; it returns the Nodes' names.
func (s *hostedSide) expectMachines(ctx context.Context, g Gomega, n int) []string {
	var nodes []string
	machines := &clusterv1.MachineList{}
	g.Expect(s.capi.List(ctx, machines, client.InNamespace(s.flow.cluster.ControlPlaneNamespace()))).To(Succeed())
	g.Expect(machines.Items).To(HaveLen(n))
	for _, m := range machines.Items {
		g.Expect(m.Status.Phase).To(Equal(string(clusterv1.MachinePhaseRunning)), "Machine %s", m.Name)
		g.Expect(m.Status.NodeRef.IsDefined()).To(BeTrue(), "Machine %s nodeRef", m.Name)
		node := scenarios.ExpectNodeReady(ctx, g, s.hosted, m.Status.NodeRef.Name)
		g.Expect(node.Spec.ProviderID).To(HavePrefix("agent://"), "Node %s", node.Name)
		g.Expect(m.Spec.ProviderID).To(Equal(node.Spec.ProviderID), "Machine %s", m.Name)
		nodes = append(nodes, node.Name)
	}
	pool := &corev1.NodeList{}
	g.Expect(s.hosted.List(ctx, pool, client.MatchingLabels{hypershift.NodePoolLabel: nodePoolName})).To(Succeed())
	g.Expect(pool.Items).To(HaveLen(n), "the NodePool's Nodes in the hosted cluster")
	np := s.flow.cluster.NodePoolOf(0)
	g.Expect(s.hub.Get(ctx, client.ObjectKeyFromObject(np), np)).To(Succeed())
	g.Expect(np.Status.Replicas).To(BeEquivalentTo(n), "NodePool status.replicas")
	return nodes
}

// goneNode is the Node of before that after lacks.
func goneNode(before, after []string) string {
	var out []string
	for _, n := range before {
		if !slices.Contains(after, n) {
			out = append(out, n)
		}
	}
	Expect(out).To(HaveLen(1), "one Node went: before %v, after %v", before, after)
	return out[0]
}

// waitFreedAgent waits for the Agent of the host whose Node went to be
// unbound and back in discovery.
func (s *hostedSide) waitFreedAgent(ctx context.Context, host string) {
	By("waiting for the Agent of " + host + " to be unbound and known-unbound again")
	iv := interval(s.in, "wait-install")
	Eventually(func(g Gomega) {
		var freed *agentv1beta1.Agent
		for _, a := range s.agents(ctx, g) {
			if a.Labels[agentv1beta1.BareMetalHostLabel] == host {
				freed = &a
			}
		}
		g.Expect(freed).NotTo(BeNil(), "the Agent of host %s", host)
		g.Expect(freed.Spec.ClusterDeploymentName).To(BeNil(), "Agent %s clusterDeploymentName", freed.Name)
		g.Expect(freed.Status.DebugInfo.State).To(Equal(agentv1beta1.AgentStateKnownUnbound), "Agent %s", freed.Name)
	}).WithContext(ctx).WithTimeout(iv.Timeout).WithPolling(iv.Polling).Should(Succeed())
}

// finish builds the flow's observation: what the recorders saw, the
// hosted cluster's Nodes and the pool's hosts with their Agents'
// inventories. The proxy stops with it.
func (s *hostedSide) finish(ctx context.Context, failed bool, why string) *results.Observation {
	defer s.stopProxy()
	in := scenarios.FinishInput{Failed: failed, Err: why, Workload: s.hosted, WorkloadConfig: s.hostedCfg,
		HostLists:      []scenarios.HostList{{Client: s.hub, Namespace: s.flow.cluster.AgentNamespace}},
		AgentNamespace: s.flow.cluster.AgentNamespace, PoolHosts: poolHostNames()}
	o := s.run.Finish(ctx, s.in.Lab, in)
	o.Backends = scenarios.HostedBackends(s.in.Lab, s.typesBackend())
	return o
}

// typesBackend says where the flow's CAPI objects are stored and how its
// clients reach them, for the report's backends line.
func (s *hostedSide) typesBackend() string {
	if s.proxy != nil {
		return "private (" + apiproxy.PrivateGroup + ", through the lab's API proxy)"
	}
	return "standard (" + clusterv1.GroupVersion.Group + ")"
}

func (s *hostedSide) stopProxy() {
	if s.proxy != nil {
		Expect(s.proxy.Stop()).To(Succeed())
	}
}
