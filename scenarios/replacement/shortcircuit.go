package replacement

import (
	"context"
	"fmt"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/paritylab/paritylab/lab/redfish"
	"github.com/paritylab/paritylab/results"
	"github.com/paritylab/paritylab/scenarios"
	"github.com/paritylab/paritylab/scenarios/day1"
)

// NameShortCircuit: two of a set's three workers fail at once under a
// health check that remediates at most one unhealthy Machine.
const NameShortCircuit = "replacement-short-circuit"

const (
	milestoneUnreachable = "workers-unreachable"
	milestoneRestricted  = "remediation-restricted"
	milestoneRecovered   = "workers-recovered"
	// failingWorkers of the short-circuit set's three hang.
	failingWorkers = 2
	// restrictedWindow is how long the run watches, once the health check
	// restricted remediation, that nothing is remediated.
	restrictedWindow = 30 * time.Second
)

// shortCircuitHealthCheck remediates only while at most one Machine is
// unhealthy (MAPI maxUnhealthy, CAPI triggerIf.unhealthyLessThanOrEqualTo).
var shortCircuitHealthCheck = healthCheck{maxUnhealthy: ptr.To(intstr.FromInt32(1)), retryTimeout: rebootHealthCheck.retryTimeout}

// ShortCircuitMilestones are the short-circuit's milestones. The health
// check is made only once both workers are unreachable for longer than
// its timeout: made before, it could see one worker fail a monitor pass
// (5 s) before the other and remediate it while it was still the only
// one, a race whose winner is timing, not either flow.
func ShortCircuitMilestones() []results.Milestone {
	return []results.Milestone{
		{Name: milestoneHung, Description: fmt.Sprintf("%d of the set's 3 workers' servers hang at once (hang faults at their BMCs)", failingWorkers)},
		{Name: milestoneUnreachable, Description: fmt.Sprintf("both workers' Nodes not Ready (Unknown) for longer than the health check's %s", unreachableAfter)},
		{Name: milestoneRestricted, Description: "the MachineHealthCheck, made then with a limit of one unhealthy Machine, counts 1 of 3 healthy and allows no remediation"},
		{Name: milestoneRecovered, Description: fmt.Sprintf("%s later, nothing remediated: the limit set to 0 and both servers power-cycled by their BareMetalHosts (hard reboot), every worker healthy again", restrictedWindow)},
	}
}

// ShortCircuitFixture is the day-1 cluster plus the short-circuit pool.
func ShortCircuitFixture() results.Fixture {
	f := day1.Fixture()
	f.Name = "local-3cp-2w-shortcircuit"
	f.Shape["shortCircuitPool"] = shortCircuitPool.hosts
	return f
}

// shortCircuitSpec runs the short-circuit on a side whose set has three
// workers: two hang, the health check comes, counts them and remediates
// neither; the run watches restrictedWindow that nothing is done to them,
// then brings them back (recoverWorkers).
func shortCircuitSpec(ctx SpecContext, in scenarios.Input, flow results.Flow, s side) {
	ws := s.ensureWorkers(ctx)
	DeferCleanup(func(ctx SpecContext) { s.deleteHealthCheck(ctx) })
	run := scenarios.NewRun(NameShortCircuit, flow, ShortCircuitFixture(), ShortCircuitMilestones())
	run.EventsOnlyFromStart = true
	s.record(ctx, run, ws)
	DeferCleanup(func(ctx SpecContext) {
		scenarios.KeepObservation(ctx, in, func(ctx context.Context, failed bool, why string) *results.Observation {
			return s.finish(ctx, failed, why)
		})
	})

	failing := ws[:failingWorkers]
	By(fmt.Sprintf("hanging %d of the 3 workers' servers through their BMCs", failingWorkers))
	hungAt := time.Now()
	for _, w := range failing {
		Expect(scenarios.HangHost(ctx, in.Lab, s.host(ctx, Default, w), redfish.HangUntilPowerOff)).To(Succeed())
	}
	run.Reach(milestoneHung)

	iv := interval(in, "wait-machines-running")
	Eventually(func(g Gomega) {
		for _, w := range failing {
			expectUnreachableFor(ctx, g, s.workload(), w.Node, unreachableAfter)
		}
	}).WithContext(ctx).WithTimeout(iv.Timeout).WithPolling(time.Second).Should(Succeed())
	run.Reach(milestoneUnreachable)

	s.createHealthCheck(ctx, shortCircuitHealthCheck)
	var mhc healthCounts
	Eventually(func(g Gomega) {
		uid, counts := s.healthCounts(ctx, g)
		g.Expect(counts).To(Equal(healthCounts{expected: 3, healthy: 1, allowed: 0}), "MachineHealthCheck status")
		mhc = counts
		run.SetProperty(uid, propertyHealthDuring, counts.String())
	}).WithContext(ctx).WithTimeout(iv.Timeout).WithPolling(time.Second).Should(Succeed())
	run.Reach(milestoneRestricted)

	By(fmt.Sprintf("watching for %s that nothing remediates the two workers", restrictedWindow))
	Consistently(func(g Gomega) {
		for _, w := range failing {
			g.Expect(s.requested(ctx, g, w)).To(BeFalse(), "a remediation request for Machine %s", w.Name)
			off, err := scenarios.PoweredOffSince(ctx, in.Lab, s.host(ctx, g, w), hungAt)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(off).To(BeFalse(), "a power-off of Machine %s's host", w.Name)
		}
		_, counts := s.healthCounts(ctx, g)
		g.Expect(counts).To(Equal(mhc), "MachineHealthCheck status")
	}).WithContext(ctx).WithTimeout(restrictedWindow).WithPolling(2 * time.Second).Should(Succeed())
	recoverWorkers(ctx, in, run, s, ws, failing)
	uid, after := s.healthCounts(ctx, Default)
	run.SetProperty(uid, propertyHealthAfter, after.String())
	AddReportEntry(fmt.Sprintf("%s %s flow", NameShortCircuit, strings.ToUpper(string(flow))), time.Since(run.Started).Round(time.Second).String())
}

// recoverWorkers brings the failing workers back as an admin would:
// remediation off first (a limit of 0 unhealthy Machines), since a worker
// that comes back before the other would leave that one alone under the
// limit of 1, and the health check would reboot it; then a hard reboot of
// each through its BareMetalHost (reboot.metal3.io), which ends the hang.
// The run ends with every worker's Node Ready on a new boot, untainted,
// and the health check counting all three healthy.
func recoverWorkers(ctx context.Context, in scenarios.Input, run *scenarios.Run, s side, ws, failing []worker) {
	By("setting the MachineHealthCheck's limit to 0 and power-cycling the two workers' hosts")
	s.setHealthCheckLimit(ctx, intstr.FromInt32(0))
	boots := map[string]string{}
	for _, w := range failing {
		boots[w.Node] = nodeOf(ctx, Default, s.workload(), w.Node).Status.NodeInfo.BootID
		s.rebootHost(ctx, w)
	}
	iv := interval(in, "wait-machines-running")
	Eventually(func(g Gomega) {
		for _, w := range ws {
			node := nodeOf(ctx, g, s.workload(), w.Node)
			g.Expect(scenarios.NodeReady(node)).To(BeTrue(), "Node %s Ready", w.Node)
			if before, ok := boots[w.Node]; ok {
				g.Expect(node.Status.NodeInfo.BootID).NotTo(Equal(before), "Node %s on a new boot", w.Node)
			}
			for _, taint := range []string{corev1.TaintNodeUnreachable, corev1.TaintNodeNotReady} {
				g.Expect(hasTaint(node, taint)).To(BeFalse(), "Node %s taint %s", w.Node, taint)
			}
			g.Expect(s.requested(ctx, g, w)).To(BeFalse(), "a remediation request for Machine %s", w.Name)
			s.expectMachineHealthy(ctx, g, w)
		}
		_, counts := s.healthCounts(ctx, g)
		g.Expect(counts.healthy).To(Equal(3), "MachineHealthCheck status %s", counts)
	}).WithContext(ctx).WithTimeout(iv.Timeout).WithPolling(2 * time.Second).Should(Succeed())
	run.Reach(milestoneRecovered)
}

func nodeOf(ctx context.Context, g Gomega, c client.Client, name string) *corev1.Node {
	node := &corev1.Node{}
	g.Expect(c.Get(ctx, client.ObjectKey{Name: name}, node)).To(Succeed())
	return node
}

// expectUnreachableFor: the Node's Ready condition is Unknown (its
// kubelet stopped reporting) since at least d ago.
func expectUnreachableFor(ctx context.Context, g Gomega, c client.Client, name string, d time.Duration) {
	node := &corev1.Node{}
	g.Expect(c.Get(ctx, client.ObjectKey{Name: name}, node)).To(Succeed())
	for _, cond := range node.Status.Conditions {
		if cond.Type == corev1.NodeReady {
			g.Expect(cond.Status).To(Equal(corev1.ConditionUnknown), "Node %s Ready", name)
			g.Expect(time.Since(cond.LastTransitionTime.Time)).To(BeNumerically(">", d), "Node %s Ready %s since", name, cond.Status)
			return
		}
	}
	g.Expect(false).To(BeTrue(), "Node %s has no Ready condition", name)
}
