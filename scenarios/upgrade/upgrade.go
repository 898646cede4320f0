package upgrade

import (
	"context"
	"fmt"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/types"

	"github.com/paritylab/paritylab/framework"
	"github.com/paritylab/paritylab/lab/releases"
	"github.com/paritylab/paritylab/results"
	"github.com/paritylab/paritylab/scenarios"
	"github.com/paritylab/paritylab/scenarios/day1"
)

// Name is the scenario's name in observations and reports.
const Name = "upgrade"

// The releases the scenario moves the day-1 clusters through; all but
// missingVersion are in the lab's registry (releases.Lab).
const (
	installedVersion = "4.21.0"
	patchVersion     = "4.21.1"
	minorVersion     = "4.22.0"
	// missingVersion is a release the registry does not serve.
	missingVersion = "4.22.1"
	gatedVersion   = "4.23.0"
)

// day2HostName is each flow's day-2 worker after the updates; its Node
// takes the name.
const day2HostName = "upgrade-day2-0"

// HostsNeeded is how many lab hosts the scenario claims, both flows: one
// day-2 worker each.
const HostsNeeded = 2

// Milestones of both flows: the same observable event on each side.
const (
	milestonePatchDone     = "patch-update-completed"
	milestoneMinorDone     = "minor-update-completed"
	milestoneMissingSignal = "missing-release-reported"
	milestoneGatedDecided  = "gated-update-decided"
	milestoneWorkerAdded   = "day2-worker-ready"
)

// Milestones are the scenario's milestones, declared once for both flows.
func Milestones() []results.Milestone {
	return []results.Milestone{
		{Name: milestonePatchDone, Description: fmt.Sprintf("the update %s -> %s reported complete where the flow's user looks (MAPI: ClusterVersion history; CAPI: the control plane's UpgradeCompleted)", installedVersion, patchVersion)},
		{Name: milestoneMinorDone, Description: fmt.Sprintf("the update %s -> %s reported complete, as above", patchVersion, minorVersion)},
		{Name: milestoneMissingSignal, Description: fmt.Sprintf("the first failure signal for %s, a release the registry does not have (MAPI: ClusterVersion ReleaseAccepted=False; CAPI: the control plane's UpgradeAvailable=False)", missingVersion)},
		{Name: milestoneGatedDecided, Description: fmt.Sprintf("the update to %s asked for while an operator reports Upgradeable=False refused by the version operator, or reported complete", gatedVersion)},
		{Name: milestoneWorkerAdded, Description: "the day-2 worker's Node Ready after the updates"},
	}
}

// Fixture is the scenario's declared fixture: the day-1 cluster.
func Fixture() results.Fixture {
	f := day1.Fixture()
	f.Name = "local-3cp-2w-upgrade"
	f.Shape["day2Workers"] = 1
	return f
}

func interval(in scenarios.Input, key string) framework.Interval {
	iv, err := in.Config.Interval(Name, key)
	Expect(err).NotTo(HaveOccurred())
	return iv
}

// release is the lab registry's release of a version.
func release(in scenarios.Input, version string) releases.Pushed {
	p, err := in.Lab.Info.Release(version)
	Expect(err).NotTo(HaveOccurred(), "the upgrade scenario needs release %s in the lab's registry", version)
	return p
}

// Spec declares the scenario's specs inside the suite's Ordered Describe:
// the MAPI flow, the CAPI flow, then the diff of what both did.
func Spec(inputGetter func() scenarios.Input) {
	flowSpec(inputGetter, results.FlowMAPI,
		"updates the spoke through ClusterVersion desiredUpdate (patch, minor, a missing release, an Upgradeable=False gate); a ZTP day-2 worker joins",
		func(ctx context.Context, in scenarios.Input, run *scenarios.Run, base *scenarios.Cluster) side {
			return newClassicSide(ctx, in, run, base)
		})
	flowSpec(inputGetter, results.FlowCAPI,
		"updates the cluster through the control plane's distributionVersion (patch, minor, a missing release, an Upgradeable=False gate); a MachineDeployment adds a worker",
		func(ctx context.Context, in scenarios.Input, run *scenarios.Run, base *scenarios.Cluster) side {
			return newCAPISide(ctx, in, run, base)
		})
	scenarios.DiffSpec(Name, inputGetter)
}

type newSide func(ctx context.Context, in scenarios.Input, run *scenarios.Run, base *scenarios.Cluster) side

func flowSpec(inputGetter func() scenarios.Input, flow results.Flow, what string, mk newSide) {
	It(scenarios.FlowSpecText(flow, what, Name), func(ctx SpecContext) {
		in := inputGetter()
		base := day1.Cluster(ctx, in, flow)
		run := scenarios.NewRunAfterSetUp(ctx, Name, flow, Fixture(), Milestones())
		run.SetCluster(base.Namespace)
		s := mk(ctx, in, run, base)
		DeferCleanup(func(ctx SpecContext) { scenarios.KeepObservation(ctx, in, s.finish) })
		st := newSteps(in, run, base, s)
		st.all(ctx)
		AddReportEntry(fmt.Sprintf("%s %s flow", Name, strings.ToUpper(string(flow))), time.Since(run.Started).Round(time.Second).String())
		for _, t := range st.times {
			AddReportEntry(fmt.Sprintf("%s %s %s", Name, strings.ToUpper(string(flow)), t.name), t.took.Round(time.Second).String())
		}
	}, SpecTimeout(40*time.Minute))
}

// side is what differs between the flows: how an update is asked for and
// where its outcome is reported, and how a worker joins on day 2.
type side interface {
	// requestUpdate asks for an update to rel.
	requestUpdate(ctx context.Context, rel releases.Pushed)
	// requestMissing asks for an update to a version the registry lacks.
	requestMissing(ctx context.Context, version string)
	// missingReported checks that the flow reports the missing release
	// and says how.
	missingReported(ctx context.Context, g Gomega) string
	// withdraw asks for the running release again and waits until the
	// flow reports nothing pending.
	withdraw(ctx context.Context, running releases.Pushed)
	// completed checks that the flow reports the update to version done.
	completed(ctx context.Context, g Gomega, version string)
	// inventory are the flow's Machines and hosts, "kind/name" by UID.
	inventory(ctx context.Context) map[types.UID]string
	// imageSetName is the flow's ClusterImageSet.
	imageSetName() string
	// addWorker adds one worker the flow's day-2 way and calls ready
	// when its Node is Ready; it returns the Node's name.
	addWorker(ctx context.Context, ready func()) string
	finish(ctx context.Context, failed bool, why string) *results.Observation
}

// subCaseTime is how long a sub-case took, for the report.
type subCaseTime struct {
	name string
	took time.Duration
}
