package replacement

import (
	"context"
	"fmt"
	"strings"
	"time"

	bmov1alpha1 "github.com/metal3-io/baremetal-operator/apis/metal3.io/v1alpha1"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"

	"github.com/paritylab/paritylab/lab/redfish"
	"github.com/paritylab/paritylab/results"
	"github.com/paritylab/paritylab/scenarios"
	"github.com/paritylab/paritylab/scenarios/day1"
)

// NameOwnerless: each flow's day-2 worker hangs under a health check with
// no remediation template and no strategy, which leaves the Machine to
// its owner. The MAPI flow's worker is the one ZTP adds on day 2: the
// BMAC writes its Machine without an owner, and its copy of the host in
// the spoke without a BMC (power lives on the hub's host, which is
// detached). The CAPI flow's day-2 worker is a MachineDeployment's.
const NameOwnerless = "replacement-owner-less"

const (
	milestoneUnhealthy  = "worker-unhealthy"
	milestoneOwnerAsked = "owner-asked"
	// ownerlessWindow is how long the run watches, once the health check
	// handed the Machine to its owner, for anything done to it before it
	// takes the Machine for left alone: an owner that acts deletes the
	// Machine within seconds.
	ownerlessWindow = 60 * time.Second
	// healthCheckLabel marks the Machines a sub-case's health check
	// selects when their set has no label of its own (the owner-less ZTP
	// day-2 Machine), as an admin labels them.
	healthCheckLabel = "paritylab.io/health-check"
	// propertyOutcome says what became of the unhealthy worker's Machine.
	propertyOutcome = "remediation.outcome"
)

// ownerlessHealthCheck has no template: the owner remediates.
var ownerlessHealthCheck = healthCheck{ownerRemediates: true}

// OwnerlessMilestones are the owner-less sub-case's milestones; what the
// owner did after it was asked is recorded on the Machine.
func OwnerlessMilestones() []results.Milestone {
	return []results.Milestone{
		{Name: milestoneHung, Description: "the day-2 worker's server hangs (a hang fault at its BMC, which still reports it On)"},
		{Name: milestoneUnhealthy, Description: "the MachineHealthCheck, which has no remediation template and no strategy, counts the worker unhealthy"},
		{Name: milestoneOwnerAsked, Description: "the health check handed the Machine to its owner: MAO's internal remediation, finding no controller " +
			"owner on the ZTP day-2 Machine, records SkippedNoController; CAPI's sets OwnerRemediated False for the MachineSet. " +
			fmt.Sprintf("The run then waits for the Machine replaced, or %s with nothing done to it", ownerlessWindow)},
	}
}

// OwnerlessFixture is the day-1 cluster plus each flow's day-2 worker.
func OwnerlessFixture() results.Fixture {
	f := day1.Fixture()
	f.Name = "local-3cp-2w-day2-worker"
	f.Shape["day2Workers"] = day2Pool.replicas
	return f
}

// ownerlessSpec runs the sub-case on a side's day-2 worker: it hangs, the
// health check counts it unhealthy and hands it to its owner, and the run
// records what the owner did: replaced it, or left it alone. A worker
// left alone is brought back once the observation is kept.
func ownerlessSpec(ctx SpecContext, in scenarios.Input, flow results.Flow, s side) {
	ws := s.ensureWorkers(ctx)
	Expect(ws).To(HaveLen(day2Pool.replicas))
	w := ws[0]
	host := s.host(ctx, Default, w)
	w.Host = host.Name
	deadNode := nodeOf(ctx, Default, s.workload(), w.Node).UID
	// Cleanups run last first: the observation is kept, then the worker
	// is brought back, then the health check goes.
	DeferCleanup(func(ctx SpecContext) { s.deleteHealthCheck(ctx) })
	DeferCleanup(func(ctx SpecContext) { recoverLeftAlone(ctx, in, s, w) })
	s.createHealthCheck(ctx, ownerlessHealthCheck)
	mhcUID, before := waitHealthy(ctx, in, s, len(ws))

	run := scenarios.NewRunAfterSetUp(ctx, NameOwnerless, flow, OwnerlessFixture(), OwnerlessMilestones())
	s.record(ctx, run, ws)
	run.SetProperty(mhcUID, propertyHealthBefore, before.String())
	DeferCleanup(func(ctx SpecContext) {
		scenarios.KeepObservation(ctx, in, func(ctx context.Context, failed bool, why string) *results.Observation {
			return s.finish(ctx, failed, why)
		})
	})

	By("hanging the day-2 worker's server through its BMC")
	hungAt := time.Now()
	Expect(scenarios.HangHost(ctx, in.Lab, host, redfish.HangUntilPowerOff)).To(Succeed())
	run.Reach(milestoneHung)

	var during healthCounts
	iv := interval(in, "wait-machines-running")
	Eventually(func(g Gomega) {
		if during == (healthCounts{}) {
			_, counts := s.healthCounts(ctx, g)
			g.Expect(counts.healthy).To(BeNumerically("<", counts.expected), "MachineHealthCheck status %s", counts)
			during = counts
			run.SetProperty(mhcUID, propertyHealthDuring, counts.String())
			run.Reach(milestoneUnhealthy)
		}
		g.Expect(s.ownerAsked(ctx, g, w)).To(BeTrue(), "the health check handed Machine %s to its owner", w.Name)
	}).WithContext(ctx).WithTimeout(iv.Timeout).WithPolling(time.Second).Should(Succeed())
	run.Reach(milestoneOwnerAsked)

	run.SetProperty(w.Machine, propertyOutcome, settleOwnerless(ctx, in, run, s, w, hungAt, during))
	// The hung worker's Node: its fate is one property; the Node aspects
	// compare the set's Node at the end (the kept one, or the
	// replacement's).
	run.SetProperty(w.Machine, propertyDeadNode, nodeFate(ctx, s.workload(), w.Node, deadNode))
	finishRun(ctx, run, s, w)
	AddReportEntry(fmt.Sprintf("%s %s flow", NameOwnerless, strings.ToUpper(string(flow))), time.Since(run.Started).Round(time.Second).String())
}

// settleOwnerless waits until the flow is done with the unhealthy
// worker, whichever way it went, and says which: left alone
// (ownerlessWindow with the same Machine, no power action at its BMC and
// the same health-check counts) or replaced (the Machine gone, another
// of the set Running with its Node in service and counted healthy, and
// the unhealthy worker's host given back, see expectReleased).
func settleOwnerless(ctx context.Context, in scenarios.Input, run *scenarios.Run, s side, w worker, hungAt time.Time, during healthCounts) string {
	By(fmt.Sprintf("waiting for the Machine replaced, or %s with nothing done to it", ownerlessWindow))
	asked := time.Now()
	touched := false
	var outcome string
	var replacement worker
	iv := interval(in, "wait-machines-running")
	Eventually(func(g Gomega) {
		live := s.liveMachines(ctx, g)
		kept := false
		var others []worker
		for _, m := range live {
			if m.Machine == w.Machine {
				kept = true
			} else {
				others = append(others, m)
			}
		}
		host := s.hostNamed(ctx, g, w.Host)
		off, err := scenarios.PoweredOffSince(ctx, in.Lab, host, hungAt)
		g.Expect(err).NotTo(HaveOccurred())
		_, counts := s.healthCounts(ctx, g)
		touched = touched || !kept || off || len(others) > 0 || counts != during
		if !touched {
			g.Expect(time.Since(asked)).To(BeNumerically(">=", ownerlessWindow), "left alone for")
			outcome = fmt.Sprintf("left alone: %s after the health check handed it to its owner, the same Machine, "+
				"no power action at its BMC, the health check counting %s", ownerlessWindow, counts)
			return
		}
		g.Expect(kept).To(BeFalse(), "Machine %s deleted", w.Name)
		g.Expect(s.machineExists(ctx, g, w)).To(BeFalse(), "Machine %s gone", w.Name)
		g.Expect(others).To(HaveLen(1), "replacement Machines")
		r := others[0]
		g.Expect(r.Node).NotTo(BeEmpty(), "replacement Machine %s Running with a nodeRef", r.Name)
		expectInService(ctx, g, s, r.Node)
		g.Expect([]int{counts.expected, counts.healthy}).To(Equal([]int{1, 1}), "MachineHealthCheck status %s", counts)
		expectReleased(g, host, r)
		replacement = r
		outcome = "replaced: the Machine deleted, a new one Running with its Node Ready; the unhealthy host deprovisioned"
	}).WithContext(ctx).WithTimeout(iv.Timeout).WithPolling(2 * time.Second).Should(Succeed())
	// The Nodes compared at the end are the replacement's instead of the
	// dead one's. On the released host taken again, the replacement's
	// Node has the dead one's name (the host's): the run watches it since
	// the start and compares it already.
	if touched && replacement.Node != w.Node {
		s.forgetNode(w.Node)
		s.recordNode(ctx, run, replacement.Node)
	}
	return outcome
}

// expectReleased: the unhealthy worker's host was given back. CAPM3
// picks the replacement's host at random among the pool's available ones
// (chooseHost, pickHost), which includes the released host once its
// deprovisioning is over: either it is off and available, or it carries
// the replacement, provisioned and on.
func expectReleased(g Gomega, host *bmov1alpha1.BareMetalHost, replacement worker) {
	if ref := host.Spec.ConsumerRef; ref != nil && ref.Name == replacement.Name {
		g.Expect(host.Status.PoweredOn).To(BeTrue(), "host %s, deprovisioned and taken again by %s, on", host.Name, replacement.Name)
		g.Expect(host.Status.Provisioning.State).To(Equal(bmov1alpha1.StateProvisioned), "host %s provisioned again", host.Name)
		return
	}
	g.Expect(host.Spec.ConsumerRef).To(BeNil(), "host %s released", host.Name)
	g.Expect(host.Status.PoweredOn).To(BeFalse(), "host %s off", host.Name)
	g.Expect(host.Status.Provisioning.State).To(Equal(bmov1alpha1.StateAvailable), "host %s deprovisioned", host.Name)
}

// recoverLeftAlone brings back a worker its flow left alone, hung, once
// the run is over: the health check goes first, then its server is
// power-cycled at its BMC, as an admin of a ZTP site does (the hub's
// host is detached and the spoke's copy has no BMC). It waits for the
// Node Ready on a new boot and untainted, so that no host is left hung
// for the sub-cases after it. A worker its flow replaced needs nothing.
func recoverLeftAlone(ctx context.Context, in scenarios.Input, s side, w worker) {
	if !s.machineExists(ctx, Default, w) {
		return
	}
	node := nodeOf(ctx, Default, s.workload(), w.Node)
	if scenarios.NodeReady(node) {
		return
	}
	By("deleting the MachineHealthCheck and power-cycling the day-2 worker's server at its BMC")
	s.deleteHealthCheck(ctx)
	Expect(scenarios.PowerCycleAtBMC(ctx, in.Lab, s.hostNamed(ctx, Default, w.Host))).To(Succeed())
	iv := interval(in, "wait-machines-running")
	Eventually(func(g Gomega) {
		now := nodeOf(ctx, g, s.workload(), w.Node)
		g.Expect(scenarios.NodeReady(now)).To(BeTrue(), "Node %s Ready", w.Node)
		g.Expect(now.Status.NodeInfo.BootID).NotTo(Equal(node.Status.NodeInfo.BootID), "Node %s on a new boot", w.Node)
		for _, taint := range []string{corev1.TaintNodeUnreachable, corev1.TaintNodeNotReady} {
			g.Expect(hasTaint(now, taint)).To(BeFalse(), "Node %s taint %s", w.Node, taint)
		}
	}).WithContext(ctx).WithTimeout(iv.Timeout).WithPolling(2 * time.Second).Should(Succeed())
}
