package day2scale

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/types"

	"github.com/paritylab/paritylab/framework"
	"github.com/paritylab/paritylab/results"
	"github.com/paritylab/paritylab/scenarios"
	"github.com/paritylab/paritylab/scenarios/day1"
)

// Name is the scenario's name in observations and reports.
const Name = "day2-scale"

// Pool sizes: the scale set reaches 3 machines at most; hosts a
// scale-down frees are used again. Each flow adds its day-2 worker with a
// new host of its own: through ZTP in the MAPI flow, as one more
// MachineDeployment replica in the CAPI flow.
const (
	scalePoolHosts = 3
	day2Hosts      = 1
	day2HostName   = "day2-worker-0"
	// HostsNeeded is how many lab hosts the scenario claims, both flows.
	HostsNeeded = 2 * (scalePoolHosts + day2Hosts)
)

// poolHostName names the i-th host of the scale set's pool.
func poolHostName(i int) string { return "scale-" + strconv.Itoa(i) }

// poolHostNames are the pool's hosts: scale-ups take any of them.
func poolHostNames() []string {
	var out []string
	for i := range scalePoolHosts {
		out = append(out, poolHostName(i))
	}
	return out
}

// Milestones of both flows: the same observable event on each side.
const (
	milestoneScaledUp      = "scaled-up-to-2"
	milestoneAnnotatedGone = "annotated-removed"
	milestoneScaledUpAgain = "scaled-up-to-3"
	milestoneNewestGone    = "newest-removed"
	milestoneOldestGone    = "oldest-removed"
	milestoneWorkerAdded   = "day2-worker-ready"
)

// Milestones are the scenario's milestones, declared once for both flows.
func Milestones() []results.Milestone {
	return []results.Milestone{
		{Name: milestoneScaledUp, Description: "the scale set's 2 Machines Running, their Nodes Ready"},
		{Name: milestoneAnnotatedGone, Description: "the Machine marked with the delete annotation gone, 1 Machine Running with its Node Ready"},
		{Name: milestoneScaledUpAgain, Description: "3 Machines Running, their Nodes Ready"},
		{Name: milestoneNewestGone, Description: "a newest Machine gone (deletion order Newest), 2 Running"},
		{Name: milestoneOldestGone, Description: "the oldest Machine gone (deletion order Oldest), 1 Running"},
		{Name: milestoneWorkerAdded, Description: "the day-2 worker's Node Ready"},
	}
}

// Why a scale-down chose a machine (results.Object property
// deletion.selectedBy).
const (
	selectedByAnnotation = "delete-annotation"
	selectedByNewest     = "newest"
	selectedByOldest     = "oldest"
	selectedByOther      = "other"
	propertySelectedBy   = "deletion.selectedBy"
)

// worker is a machine of the flow's scale set as both sides see it.
type worker struct {
	Name    string
	UID     types.UID
	Created time.Time
}

// scaleSet is one flow's way to scale workers: a MachineSet on the spoke
// or a MachineDeployment on the hub.
type scaleSet interface {
	// create makes the scale set with 0 replicas and the hosts it uses.
	create(ctx context.Context)
	// scale sets its replicas.
	scale(ctx context.Context, replicas int)
	// markForDeletion puts the side's delete annotation on a machine.
	markForDeletion(ctx context.Context, name string)
	// setDeletionOrder sets Newest or Oldest.
	setDeletionOrder(ctx context.Context, order string)
	// waitRunning waits for exactly n machines Running with Ready nodes
	// and returns them.
	waitRunning(ctx context.Context, n int) []worker
	// addWorker adds one worker to the cluster the side's day-2 way, waits
	// for its node to be Ready, calls ready, and then waits for what else
	// the side does with the new worker.
	addWorker(ctx context.Context, ready func())
	finish(ctx context.Context, failed bool, why string) *results.Observation
}

// runSteps is the scenario, the same for both flows.
func runSteps(ctx context.Context, run *scenarios.Run, s scaleSet) {
	s.create(ctx)

	By("scaling workers up by 2")
	s.scale(ctx, 2)
	two := s.waitRunning(ctx, 2)
	run.Reach(milestoneScaledUp)

	marked := byName(two)[0]
	By("marking " + marked.Name + " with the delete annotation and scaling down by 1")
	s.markForDeletion(ctx, marked.Name)
	s.scale(ctx, 1)
	one := s.waitRunning(ctx, 1)
	run.Reach(milestoneAnnotatedGone)
	recordDeleted(run, two, one, selectedByAnnotation, marked.UID)
	Expect(gone(two, one)).To(HaveField("UID", marked.UID), "the annotated machine is the one deleted")

	By("scaling up by 2 again, so that one machine is older than the others")
	s.scale(ctx, 3)
	three := s.waitRunning(ctx, 3)
	run.Reach(milestoneScaledUpAgain)

	By("scaling down by 1 with deletion order Newest")
	s.setDeletionOrder(ctx, "Newest")
	s.scale(ctx, 2)
	left := s.waitRunning(ctx, 2)
	run.Reach(milestoneNewestGone)
	deleted := recordDeleted(run, three, left, selectedByNewest, "")
	Expect(isNewest(deleted, left)).To(BeTrue(), "Newest deleted %s (created %s), not a newest machine", deleted.Name, deleted.Created)

	By("scaling down by 1 with deletion order Oldest")
	s.setDeletionOrder(ctx, "Oldest")
	s.scale(ctx, 1)
	last := s.waitRunning(ctx, 1)
	run.Reach(milestoneOldestGone)
	deleted = recordDeleted(run, left, last, selectedByOldest, "")
	Expect(isOldest(deleted, last)).To(BeTrue(), "Oldest deleted %s (created %s), not the oldest machine", deleted.Name, deleted.Created)

	By("adding one worker the flow's day-2 way")
	s.addWorker(ctx, func() { run.Reach(milestoneWorkerAdded) })
}

// recordDeleted finds the machine a scale-down removed and records why
// it was chosen: the expected reason when it matches, else "other".
func recordDeleted(run *scenarios.Run, before, after []worker, reason string, marked types.UID) worker {
	w := gone(before, after)
	why := reason
	switch reason {
	case selectedByAnnotation:
		if w.UID != marked {
			why = selectedByOther
		}
	case selectedByNewest:
		if !isNewest(w, after) {
			why = selectedByOther
		}
	case selectedByOldest:
		if !isOldest(w, after) {
			why = selectedByOther
		}
	}
	run.SetProperty(w.UID, propertySelectedBy, why)
	return w
}

// gone is the machine of before that after lacks.
func gone(before, after []worker) worker {
	left := map[types.UID]bool{}
	for _, w := range after {
		left[w.UID] = true
	}
	var out []worker
	for _, w := range before {
		if !left[w.UID] {
			out = append(out, w)
		}
	}
	Expect(out).To(HaveLen(1), "one machine went: before %v, after %v", before, after)
	return out[0]
}

// isNewest: no remaining machine was created after w (creation times
// have second resolution, so machines made together tie).
func isNewest(w worker, rest []worker) bool {
	for _, o := range rest {
		if o.Created.After(w.Created) {
			return false
		}
	}
	return true
}

func isOldest(w worker, rest []worker) bool {
	for _, o := range rest {
		if o.Created.Before(w.Created) {
			return false
		}
	}
	return true
}

func byName(ws []worker) []worker {
	out := append([]worker(nil), ws...)
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Fixture is the scenario's declared fixture: the day-1 cluster plus the
// pool the scale set uses.
func Fixture() results.Fixture {
	f := day1.Fixture()
	f.Name = "local-3cp-2w-scale"
	f.Shape["scalePool"] = scalePoolHosts
	return f
}

func interval(in scenarios.Input, key string) framework.Interval {
	iv, err := in.Config.Interval(Name, key)
	Expect(err).NotTo(HaveOccurred())
	return iv
}

// Spec declares the scenario's specs inside the suite's Ordered Describe:
// the MAPI flow, the CAPI flow, then the diff of what both did.
func Spec(inputGetter func() scenarios.Input) {
	flowSpec(inputGetter, results.FlowMAPI,
		"a MachineSet on the spoke scales up by 2, down by 1 (delete annotation, Newest, Oldest); a ZTP day-2 host joins",
		func(ctx context.Context, in scenarios.Input, run *scenarios.Run, base *scenarios.Cluster) scaleSet {
			return newMachineSetSide(ctx, in, run, base)
		})
	flowSpec(inputGetter, results.FlowCAPI,
		"a MachineDeployment on the hub scales up by 2, down by 1 (delete annotation, Newest, Oldest), then up by 1",
		func(ctx context.Context, in scenarios.Input, run *scenarios.Run, base *scenarios.Cluster) scaleSet {
			return newMachineDeploymentSide(ctx, in, run, base)
		})
	scenarios.DiffSpec(Name, inputGetter)
}

// newSide makes a flow's scale set on its base cluster.
type newSide func(ctx context.Context, in scenarios.Input, run *scenarios.Run, base *scenarios.Cluster) scaleSet

// flowSpec declares one flow's spec: the same steps on that flow's side.
func flowSpec(inputGetter func() scenarios.Input, flow results.Flow, what string, side newSide) {
	It(scenarios.FlowSpecText(flow, what, Name), func(ctx SpecContext) {
		in := inputGetter()
		base := day1.Cluster(ctx, in, flow)
		run := scenarios.NewRun(Name, flow, Fixture(), Milestones())
		run.SetCluster(base.Namespace)
		s := side(ctx, in, run, base)
		DeferCleanup(func(ctx SpecContext) { scenarios.KeepObservation(ctx, in, s.finish) })
		runSteps(ctx, run, s)
		AddReportEntry(fmt.Sprintf("%s %s flow", Name, strings.ToUpper(string(flow))), time.Since(run.Started).Round(time.Second).String())
	}, SpecTimeout(40*time.Minute))
}
