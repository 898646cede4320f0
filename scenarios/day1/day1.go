package day1

import (
	"context"
	"fmt"
	"strconv"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/paritylab/paritylab/framework"
	"github.com/paritylab/paritylab/lab/workload"
	"github.com/paritylab/paritylab/results"
	"github.com/paritylab/paritylab/scenarios"
)

// Name is the scenario's name in observations and reports.
const Name = "day1"

// The cluster's shape, the same in both flows.
const (
	controlPlaneReplicas = 3
	workerReplicas       = 2
)

// Milestones of both flows: the same observable event on each side.
const (
	milestoneAgents     = "control-plane-agents"
	milestoneKubeconfig = "kubeconfig-usable"
	milestoneNodes      = "nodes-ready"
	milestoneMachines   = "machines-running"
)

// Milestones are the scenario's milestones, declared once for both flows.
func Milestones() []results.Milestone {
	return []results.Milestone{
		{Name: milestoneAgents, Description: fmt.Sprintf("the agents of the %d control-plane hosts registered, with role master, and approved", controlPlaneReplicas)},
		{Name: milestoneKubeconfig, Description: "the cluster's admin kubeconfig is published on the hub and lists the cluster's Nodes"},
		{Name: milestoneNodes, Description: fmt.Sprintf("%d Nodes Ready", controlPlaneReplicas+workerReplicas)},
		{Name: milestoneMachines, Description: fmt.Sprintf("%d Machines Running, each with a nodeRef", controlPlaneReplicas+workerReplicas)},
	}
}

// HostsNeeded is how many lab hosts the scenario claims, both flows.
const HostsNeeded = 2 * (controlPlaneReplicas + workerReplicas)

// pullSecret is a test-only pull secret for a registry that does not
// exist.
const pullSecret = `{"auths":{"registry.example":{"auth":"dXNlcjpwYXNz"}}}`

type hostName struct{ name, role string }

func hostNames() []hostName {
	var out []hostName
	for i := range controlPlaneReplicas {
		out = append(out, hostName{name: "master-" + strconv.Itoa(i), role: "master"})
	}
	for i := range workerReplicas {
		out = append(out, hostName{name: "worker-" + strconv.Itoa(i), role: "worker"})
	}
	return out
}

// Fixture is the scenario's fixture as the scenario declares it: its name
// and cluster shape. What the hosts and the cluster really are (hardware,
// versions) the flow's observation records from what they report.
func Fixture() results.Fixture {
	return results.Fixture{Name: "local-3cp-2w", Shape: map[string]int{"controlPlane": controlPlaneReplicas, "workers": workerReplicas}}
}

// version is the OpenShift release both flows install.
func version(cfg *framework.Config) string {
	return cfg.Variable("OPENSHIFT_VERSION", workload.DefaultVersion)
}

// releaseImage is the release of the version in the lab's registry, by
// digest, as a ClusterImageSet names a mirrored release.
func releaseImage(in scenarios.Input) string {
	p, err := in.Lab.Info.Release(version(in.Config))
	Expect(err).NotTo(HaveOccurred())
	return p.Image
}

func interval(in scenarios.Input, key string) framework.Interval {
	iv, err := in.Config.Interval(Name, key)
	Expect(err).NotTo(HaveOccurred())
	return iv
}

// waitNodesReady waits until the workload cluster has n Ready Nodes.
func waitNodesReady(ctx context.Context, in scenarios.Input, c client.Client, n int) {
	By("waiting for every node to join and be Ready")
	iv := interval(in, "wait-nodes-ready")
	Eventually(func(g Gomega) {
		nodes := &corev1.NodeList{}
		g.Expect(c.List(ctx, nodes)).To(Succeed())
		g.Expect(nodes.Items).To(HaveLen(n))
		for _, node := range nodes.Items {
			g.Expect(scenarios.NodeReady(&node)).To(BeTrue(), "node %s Ready", node.Name)
		}
	}).WithContext(ctx).WithTimeout(iv.Timeout).WithPolling(iv.Polling).Should(Succeed())
}

// waitKubeconfigUsable waits until the flow's published admin kubeconfig
// lists the cluster's Nodes (the kubeconfig-usable milestone, the same
// on both sides), checking check (the flow did not fail) each time, and
// returns the kubeconfig.
func waitKubeconfigUsable(ctx context.Context, in scenarios.Input, kubeconfig func(context.Context) ([]byte, error), check func(Gomega)) []byte {
	iv := interval(in, "wait-install")
	var raw []byte
	Eventually(func(g Gomega) {
		check(g)
		var err error
		raw, err = kubeconfig(ctx)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(scenarios.KubeconfigUsable(ctx, raw, in.Lab.Scheme())).To(Succeed())
	}).WithContext(ctx).WithTimeout(iv.Timeout).WithPolling(iv.Polling).Should(Succeed())
	return raw
}

// Spec declares the scenario's specs inside the suite's Ordered Describe:
// the MAPI flow, the CAPI flow, then the diff of what both did.
func Spec(inputGetter func() scenarios.Input) {
	It(scenarios.FlowSpecText(results.FlowMAPI, "installs 3 control-plane nodes and 2 workers from ZTP manifests", Name), func(ctx SpecContext) {
		in := inputGetter()
		f := &classicFlow{in: in, run: scenarios.NewRun(Name, results.FlowMAPI, Fixture(), Milestones())}
		f.start(ctx)
		DeferCleanup(func(ctx SpecContext) { scenarios.KeepObservation(ctx, in, f.finish) })
		f.install(ctx)
		AddReportEntry("day1 MAPI flow", time.Since(f.run.Started).Round(time.Second).String())
	}, SpecTimeout(25*time.Minute))

	It(scenarios.FlowSpecText(results.FlowCAPI, "installs 3 control-plane nodes and 2 workers through the agent providers", Name), func(ctx SpecContext) {
		in := inputGetter()
		f := &capiFlow{in: in, run: scenarios.NewRun(Name, results.FlowCAPI, Fixture(), Milestones())}
		f.start(ctx)
		DeferCleanup(func(ctx SpecContext) { scenarios.KeepObservation(ctx, in, f.finish) })
		f.install(ctx)
		AddReportEntry("day1 CAPI flow", time.Since(f.run.Started).Round(time.Second).String())
	}, SpecTimeout(25*time.Minute))

	scenarios.DiffSpec(Name, inputGetter)
}

// Cluster returns a flow's day-1 cluster, installing it (Install) when
// the day1 scenario did not run: what later scenarios start from.
func Cluster(ctx context.Context, in scenarios.Input, flow results.Flow) *scenarios.Cluster {
	if c := in.Clusters.Get(flow); c != nil {
		return c
	}
	By("installing the day-1 cluster this scenario starts from (the day1 scenario did not run)")
	Install(ctx, in, flow)
	c := in.Clusters.Get(flow)
	Expect(c).NotTo(BeNil())
	return c
}

// Install installs a flow's day-1 cluster without recording it, for
// scenarios that start from an installed cluster when this one did not
// run; the cluster lands in in.Clusters.
func Install(ctx context.Context, in scenarios.Input, flow results.Flow) {
	run := scenarios.NewRun(Name, flow, Fixture(), Milestones())
	defer run.Stop()
	if flow == results.FlowMAPI {
		f := &classicFlow{in: in, run: run}
		f.start(ctx)
		f.install(ctx)
		return
	}
	f := &capiFlow{in: in, run: run}
	f.start(ctx)
	f.install(ctx)
}
