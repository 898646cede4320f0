package hypershift

import (
	"context"
	"fmt"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/paritylab/paritylab/framework"
	"github.com/paritylab/paritylab/results"
	"github.com/paritylab/paritylab/scenarios"
)

// PrivateTypesName is the scenario that runs the same NodePool flow on a
// hosted cluster on the standard CAPI types and on one on HyperShift's
// private types.
const PrivateTypesName = results.ScenarioHyperShiftPrivateTypes

// Names are the scenarios of this package, in the order they run.
func Names() []string { return []string{PrivateTypesName, MigrationName} }

// The pool: each flow's NodePool takes its Agents from hosts of its own,
// named alike on both flows so that their Nodes compare by name.
const (
	poolHosts = 2
	// HostsNeeded is how many lab hosts the scenarios claim, every flow.
	HostsNeeded = 2 * poolHosts
	// poolLabelKey labels a flow's Agents (the InfraEnv's agentLabels)
	// for its NodePool's agentLabelSelector.
	poolLabelKey = "hypershift-pool"
	nodePoolName = "workers"
	clusterName  = "hc1"
)

// poolHostName names the i-th host of a flow's pool; the host's Node
// takes the name.
func poolHostName(i int) string { return fmt.Sprintf("hosted-%d", i) }

func poolHostNames() []string {
	var out []string
	for i := range poolHosts {
		out = append(out, poolHostName(i))
	}
	return out
}

// Milestones of every flow: the same observable event on each side.
const (
	milestoneScaledUp     = "scaled-up-to-2"
	milestoneScaledDown   = "scaled-down-to-1"
	milestoneAgentUnbound = "agent-unbound"
)

// Milestones are the NodePool flow's milestones.
func Milestones() []results.Milestone {
	return []results.Milestone{
		{Name: milestoneScaledUp, Description: "the NodePool at 2 replicas: 2 Machines Running, their hosted Nodes Ready"},
		{Name: milestoneScaledDown, Description: "the NodePool at 1 replica: 1 Machine Running, the other Machine and its Node gone"},
		{Name: milestoneAgentUnbound, Description: "the freed Agent unbound and back in discovery (known-unbound)"},
	}
}

// Fixture is what every flow starts from: a hosted cluster on the agent
// platform, a NodePool of none and a pool of late-binding hosts booted
// into discovery, their Agents approved and known-unbound.
func Fixture() results.Fixture {
	return results.Fixture{Name: "local-hosted-nodepool", Shape: map[string]int{"nodePool": 0, "agentPool": poolHosts}}
}

// hostedFlow is one flow of the NodePool scenario: where its objects live
// and which CAPI types its hosted cluster is on.
type hostedFlow struct {
	flow    results.Flow
	cluster framework.HostedClusterInput
}

// flows are the NodePool flow's two sides: the hosted cluster on the
// standard types (the platform's CAPI serves it) and one on HyperShift's
// private types (its own CAPI, through the API proxy).
func flows(release string) []hostedFlow {
	flow := func(f results.Flow, suffix string, private bool) hostedFlow {
		return hostedFlow{flow: f, cluster: framework.HostedClusterInput{
			Namespace: "hosted-" + suffix, Name: clusterName, AgentNamespace: "hardware-" + suffix,
			ReleaseImage: release, NodePool: nodePoolName, PoolLabels: map[string]string{poolLabelKey: nodePoolName},
			PrivateCAPITypes: private, PullSecret: pullSecret}}
	}
	return []hostedFlow{flow(results.FlowCAPI, "standard", false), flow(results.FlowCAPIPrivate, "private", true)}
}

// pullSecret is a test-only pull secret for a registry that does not
// exist; the lab's hosts pull nothing with it.
const pullSecret = `{"auths":{"registry.example":{"auth":"dXNlcjpwYXNz"}}}`

// standardFlowRan tells the migration specs that the standard NodePool
// flow left its hosted cluster as it should: they start from it.
var standardFlowRan bool

// Spec declares the scenarios' specs inside the suite's Ordered Describe:
// the NodePool flow on the standard types, on the private types, and the
// diff of the two; then the migration of the standard flow's cluster,
// observed before and after, and the diff of those.
func Spec(inputGetter func() scenarios.Input) {
	for i, what := range []string{
		"a hosted cluster's NodePool on the standard CAPI types scales 0 to 2 to 1 over late-binding Agents",
		"the same NodePool flow on HyperShift's private CAPI types, recorded through the API proxy",
	} {
		It(scenarios.FlowSpecText(flowAt(i), what, PrivateTypesName), func(ctx SpecContext) {
			in := inputGetter()
			f := flows(releaseImage(in))[i]
			runNodePoolFlow(ctx, in, f)
		}, SpecTimeout(40*time.Minute))
	}
	scenarios.DiffSpec(PrivateTypesName, inputGetter)
	migrationSpecs(inputGetter)
}

// flowAt is the flow of the i-th spec (flows' order) without a lab.
func flowAt(i int) results.Flow { return flows("")[i].flow }

// runNodePoolFlow runs the NodePool flow on one side and keeps its
// observation, passed or failed. The run starts once the side's hosted
// control plane is Available and its pool's Agents are known-unbound:
// booting hosts into discovery involves no CAPI object, and the set-up
// boots every flow's pool at once, so that the second flow finds its
// Agents waiting.
func runNodePoolFlow(ctx context.Context, in scenarios.Input, f hostedFlow) {
	setUp := prepare(ctx, in, f)
	run := scenarios.NewRunAfterSetUp(ctx, PrivateTypesName, f.flow, Fixture(), Milestones())
	run.SetCluster(f.cluster.Name)
	s := connect(in, run, f, f.cluster.PrivateCAPITypes)
	s.hosted, s.hostedCfg = setUp.hosted, setUp.hostedCfg
	DeferCleanup(func(ctx SpecContext) { scenarios.KeepObservation(ctx, in, s.finish) })
	s.recordHub(ctx)
	s.recordNodes(ctx)

	By("scaling the NodePool to 2: two Agents are bound, install and join the hosted cluster")
	s.scale(ctx, 2)
	two := s.waitMachines(ctx, 2)
	run.Reach(milestoneScaledUp)

	By("scaling the NodePool to 1: a Machine goes, its Node is deleted and its Agent unbound")
	s.scale(ctx, 1)
	one := s.waitMachines(ctx, 1)
	run.Reach(milestoneScaledDown)
	freed := goneNode(two, one)
	s.waitFreedAgent(ctx, freed)
	run.Reach(milestoneAgentUnbound)
	AddReportEntry(fmt.Sprintf("%s %s flow", PrivateTypesName, f.flow), time.Since(run.Started).Round(time.Second).String())
	if !f.cluster.PrivateCAPITypes {
		standardFlowRan = true
	}
}

func releaseImage(in scenarios.Input) string {
	p, err := in.Lab.Info.Release(in.Config.Variable("OPENSHIFT_VERSION", ""))
	Expect(err).NotTo(HaveOccurred())
	return p.Image
}

func interval(in scenarios.Input, key string) framework.Interval {
	iv, err := in.Config.Interval(PrivateTypesName, key)
	Expect(err).NotTo(HaveOccurred())
	return iv
}
