package disconnected

import (
	"context"
	"fmt"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/paritylab/paritylab/framework"
	"github.com/paritylab/paritylab/lab"
	"github.com/paritylab/paritylab/lab/releases"
	"github.com/paritylab/paritylab/results"
	"github.com/paritylab/paritylab/scenarios"
)

// Name is the scenario's name in observations and reports.
const Name = "disconnected"

// The releases the scenario installs and updates to, from the site's
// source (published there by the lab, and mirrored).
const (
	installedVersion = "4.21.0"
	updateVersion    = "4.21.1"
)

// controlPlaneReplicas is the compact cluster's size in both flows; a
// day-2 worker joins it.
const controlPlaneReplicas = 3

// HostsNeeded is how many lab hosts the scenario claims, both flows.
const HostsNeeded = 2 * (controlPlaneReplicas + 1)

// Milestones of both flows; the names are those of the day1 and upgrade
// scenarios for the same events.
const (
	milestoneAgents     = "control-plane-agents"
	milestoneKubeconfig = "kubeconfig-usable"
	milestoneNodes      = "nodes-ready"
	milestoneWorker     = "day2-worker-ready"
	milestoneUpdated    = "patch-update-completed"
)

// Milestones are the scenario's milestones, declared once for both flows.
func Milestones() []results.Milestone {
	return []results.Milestone{
		{Name: milestoneAgents, Description: fmt.Sprintf("the agents of the %d control-plane hosts registered, with role master, and approved", controlPlaneReplicas)},
		{Name: milestoneKubeconfig, Description: "the cluster's admin kubeconfig is published on the hub and lists the cluster's Nodes"},
		{Name: milestoneNodes, Description: fmt.Sprintf("%d Nodes Ready", controlPlaneReplicas)},
		{Name: milestoneWorker, Description: "the day-2 worker's Node Ready"},
		{Name: milestoneUpdated, Description: fmt.Sprintf("the update %s -> %s reported complete where the flow's user looks (MAPI: ClusterVersion history; CAPI: the control plane's UpgradeCompleted)", installedVersion, updateVersion)},
	}
}

// Fixture is the scenario's declared fixture.
func Fixture() results.Fixture {
	return results.Fixture{Name: "local-3cp-disconnected", Shape: map[string]int{"controlPlane": controlPlaneReplicas, "day2Workers": 1}}
}

func interval(in scenarios.Input, key string) framework.Interval {
	iv, err := in.Config.Interval(Name, key)
	Expect(err).NotTo(HaveOccurred())
	return iv
}

// site is the lab's disconnected site.
func site(in scenarios.Input) *lab.MirrorSite {
	s := in.Lab.Info.MirrorSite
	Expect(s).NotTo(BeNil(), "the lab has no disconnected site")
	return s
}

// published is the site source's release of a version.
func published(in scenarios.Input, version string) releases.Pushed {
	p, err := lab.FindRelease(site(in).Published, version)
	Expect(err).NotTo(HaveOccurred())
	return p
}

// Spec declares the scenario's specs inside the suite's Ordered Describe.
func Spec(inputGetter func() scenarios.Input) {
	flowSpec(inputGetter, results.FlowMAPI,
		"installs a compact cluster from a ClusterImageSet naming the source by digest through the hub's mirrors, adds a ZTP day-2 worker and updates it by digest",
		func(in scenarios.Input, run *scenarios.Run) side { return &classicSide{in: in, run: run} })
	flowSpec(inputGetter, results.FlowCAPI,
		"installs a compact cluster with the release repository and imageRegistryRef naming the mirror, adds a MachineDeployment worker and updates it through distributionVersion",
		func(in scenarios.Input, run *scenarios.Run) side { return &capiSide{in: in, run: run} })
	scenarios.DiffSpec(Name, inputGetter)
}

func flowSpec(inputGetter func() scenarios.Input, flow results.Flow, what string, mk func(scenarios.Input, *scenarios.Run) side) {
	It(scenarios.FlowSpecText(flow, what, Name), func(ctx SpecContext) {
		in := inputGetter()
		run := scenarios.NewRun(Name, flow, Fixture(), Milestones())
		s := mk(in, run)
		st := &steps{in: in, run: run, side: s, facts: map[string]string{}}
		DeferCleanup(func(ctx SpecContext) {
			scenarios.KeepObservation(ctx, in, func(ctx context.Context, failed bool, why string) *results.Observation {
				st.recordFacts(ctx)
				return run.Finish(ctx, in.Lab, st.finishInput(failed, why))
			})
		})
		st.all(ctx)
		AddReportEntry(fmt.Sprintf("%s %s flow", Name, strings.ToUpper(string(flow))), time.Since(run.Started).Round(time.Second).String())
	}, SpecTimeout(30*time.Minute))
}
