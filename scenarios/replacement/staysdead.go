package replacement

import (
	"context"
	"fmt"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/paritylab/paritylab/lab/redfish"
	"github.com/paritylab/paritylab/results"
	"github.com/paritylab/paritylab/scenarios"
)

// NameStaysDead: the reboot set's worker hangs again on every power-on;
// the remediation's retries run out.
const NameStaysDead = "replacement-stays-dead"

const (
	milestonePoweredOffAgain = "host-powered-off-again"
	milestoneGaveUp          = "remediation-gave-up"
	// settleWindow is how long the run waits, once the remediation gave
	// up, for the set to start a replacement Machine before an admin
	// deletes the dead one: the set's controller hears of every change to
	// the Machine at once, so a replacement that is coming is there
	// within seconds.
	settleWindow = 60 * time.Second
	// Properties of the dead Machine.
	propertyReplacement  = "remediation.replacement"
	propertyRequestAtEnd = "remediation.requestAtEnd"
)

// staysDeadHealthCheck: each reboot waits the shortest timeout both
// flows' webhooks allow (100 s), and one retry follows the first reboot.
var staysDeadHealthCheck = healthCheck{retryTimeout: 100 * time.Second}

// StaysDeadMilestones are the stays-dead sub-case's milestones, the same
// on both flows; how the replacement came (by itself, or only once the
// dead Machine was deleted by hand) is recorded on the dead Machine.
func StaysDeadMilestones() []results.Milestone {
	return []results.Milestone{
		{Name: milestoneHung, Description: "the worker's server hangs on every power-on (a hang fault that stays)"},
		{Name: milestoneRequested, Description: "the MachineHealthCheck asked for remediation (a Metal3Remediation)"},
		{Name: milestonePoweredOff, Description: "the worker's BMC powered its server off (its operation log)"},
		{Name: milestonePoweredOffAgain, Description: fmt.Sprintf("after the remediation's %s timeout, its retry powered the server off again", staysDeadHealthCheck.retryTimeout)},
		{Name: milestoneGaveUp, Description: "the retries ran out: the remediation marked the host unhealthy"},
	}
}

// staysDeadSpec runs the sub-case on a side's reboot set: the worker
// hangs for good, the remediation reboots it twice and gives up; the run
// then waits for the set's replacement Machine Running with a Ready Node
// (deleting the dead Machine by hand when none comes) and records how it
// came.
func staysDeadSpec(ctx SpecContext, in scenarios.Input, flow results.Flow, s side) {
	w := s.ensureWorkers(ctx)[0]
	DeferCleanup(func(ctx SpecContext) { s.deleteHealthCheck(ctx) })
	s.createHealthCheck(ctx, staysDeadHealthCheck)
	mhcUID, before := waitHealthy(ctx, in, s, 1)

	run := scenarios.NewRunAfterSetUp(ctx, NameStaysDead, flow, Fixture(), StaysDeadMilestones())
	s.record(ctx, run, []worker{w})
	run.SetProperty(mhcUID, propertyHealthBefore, before.String())
	DeferCleanup(func(ctx SpecContext) {
		scenarios.KeepObservation(ctx, in, func(ctx context.Context, failed bool, why string) *results.Observation {
			return s.finish(ctx, failed, why)
		})
	})
	host := s.host(ctx, Default, w)
	w.Host = host.Name
	DeferCleanup(func(ctx SpecContext) {
		// The dead host may serve again once the lab's run is over.
		Expect(scenarios.ClearHostFault(ctx, in.Lab, host)).To(Succeed())
	})

	By("hanging the worker's server through its BMC, on every power-on")
	hungAt := time.Now()
	Expect(scenarios.HangHost(ctx, in.Lab, host, redfish.HangAlways)).To(Succeed())
	run.Reach(milestoneHung)
	followDeath(ctx, in, run, s, w, hungAt)
	run.SetProperty(w.Machine, propertyReplacement, awaitReplacement(ctx, in, run, s, w))
	finishRun(ctx, run, s, w)
	AddReportEntry(fmt.Sprintf("%s %s flow", NameStaysDead, strings.ToUpper(string(flow))), time.Since(run.Started).Round(time.Second).String())
}

// followDeath reaches the milestones up to the remediation giving up.
func followDeath(ctx context.Context, in scenarios.Input, run *scenarios.Run, s side, w worker, hungAt time.Time) {
	var requested bool
	var during string
	offs := 0
	iv := interval(in, "wait-machines-running")
	Eventually(func(g Gomega) {
		if !requested && s.requested(ctx, g, w) {
			requested = true
			run.Reach(milestoneRequested)
		}
		if requested && during == "" {
			if during = countsWhileUnhealthy(ctx, g, s); during != "" {
				uid, _ := s.healthCounts(ctx, g)
				run.SetProperty(uid, propertyHealthDuring, during)
			}
		}
		host := s.hostNamed(ctx, g, w.Host)
		n, err := scenarios.PowerOffsSince(ctx, in.Lab, host, hungAt)
		g.Expect(err).NotTo(HaveOccurred())
		for ; offs < n && offs < 2; offs++ {
			run.Reach([]string{milestonePoweredOff, milestonePoweredOffAgain}[offs])
		}
		g.Expect(offs).To(Equal(2), "power-offs of host %s since it hung", host.Name)
		g.Expect(s.markedUnhealthy(host)).To(BeTrue(), "host %s marked unhealthy", host.Name)
		g.Expect(during).NotTo(BeEmpty(), "the health check's counts while the worker was unhealthy")
	}).WithContext(ctx).WithTimeout(iv.Timeout).WithPolling(time.Second).Should(Succeed())
	run.Reach(milestoneGaveUp)
}

// awaitReplacement waits for a Machine of the set other than the dead
// one Running with a Ready Node in service, the health check counting
// one Machine, healthy, and for the dead one's remediation request to be
// gone or being deleted, and records which: OpenShift's controller keeps
// its finalizer on a remediation that gave up and fails every reconcile
// once the Machine is gone, so GC's deletion never completes. When none
// has come settleWindow after the remediation gave up, it deletes the
// dead Machine, as an admin whose set is a worker short would, and waits
// for the replacement that follows. It says which way the replacement
// came.
func awaitReplacement(ctx context.Context, in scenarios.Input, run *scenarios.Run, s side, w worker) string {
	By(fmt.Sprintf("waiting for a replacement Machine, %s at most before deleting the dead one by hand", settleWindow))
	gaveUp := time.Now()
	how, request := "automatic", ""
	iv := interval(in, "wait-machines-running")
	Eventually(func(g Gomega) {
		var others []worker
		for _, m := range s.liveMachines(ctx, g) {
			if m.Machine != w.Machine {
				others = append(others, m)
			}
		}
		if len(others) == 0 && how == "automatic" && time.Since(gaveUp) > settleWindow {
			By(fmt.Sprintf("no replacement %s after the remediation gave up: deleting Machine %s by hand", settleWindow, w.Name))
			s.deleteMachine(ctx, g, w)
			how = "after the dead Machine was deleted by hand"
		}
		g.Expect(others).To(HaveLen(1), "replacement Machines")
		r := others[0]
		g.Expect(r.Node).NotTo(BeEmpty(), "replacement Machine %s Running with a nodeRef", r.Name)
		s.recordNode(ctx, run, r.Node)
		expectInService(ctx, g, s, r.Node)
		// Counted healthy by the health check, rather than the CAPI
		// Machine's HealthCheckSucceeded: CAPI v1.13.4's health check with
		// a remediation template writes that condition on a healthy
		// Machine only when it deletes the Machine's remediation request
		// (patchHealthyTargets), so a new Machine never gets it.
		_, counts := s.healthCounts(ctx, g)
		g.Expect([]int{counts.expected, counts.healthy}).To(Equal([]int{1, 1}), "MachineHealthCheck status %s", counts)
		request = s.requestState(ctx, g, w)
		g.Expect(request).NotTo(Equal(requestLive), "the dead Machine's remediation request")
	}).WithContext(ctx).WithTimeout(iv.Timeout).WithPolling(2 * time.Second).Should(Succeed())
	run.SetProperty(w.Machine, propertyRequestAtEnd, request)
	return how + ": a Machine Running on the pool's other host, its Node Ready"
}
