package replacement

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	bmov1alpha1 "github.com/metal3-io/baremetal-operator/apis/metal3.io/v1alpha1"
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
	milestoneHeld        = "nothing-remediated"
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
// one, a race whose winner is timing, not either flow. The run ends while
// remediation is still restricted: the way back (a worker that returns
// first leaves the other alone under the limit, and remediation resumes)
// depends on which returns first, and CAPI's health check leaves a
// Machine that comes back then with HealthCheckSucceeded=False for good
// (it writes the condition on a healthy Machine only when it deletes its
// remediation request, or while restricted), so what it compares would
// be timing, not either flow.
func ShortCircuitMilestones() []results.Milestone {
	return []results.Milestone{
		{Name: milestoneHung, Description: fmt.Sprintf("%d of the set's 3 workers' servers hang at once (hang faults at their BMCs)", failingWorkers)},
		{Name: milestoneUnreachable, Description: fmt.Sprintf("both workers' Nodes not Ready (Unknown) for longer than the health check's %s", unreachableAfter)},
		{Name: milestoneRestricted, Description: "the MachineHealthCheck, made then with a limit of one unhealthy Machine, counts 1 of 3 healthy and allows no remediation"},
		{Name: milestoneHeld, Description: fmt.Sprintf("%s later: no remediation request, no power-off, the same counts; the run ends here, "+
			"and the workers are brought back after it (health check deleted, a hard reboot of each host), outside what is compared", restrictedWindow)},
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
// neither; the run watches restrictedWindow that nothing is done to them
// and ends. The workers are recovered once the observation is kept.
func shortCircuitSpec(ctx SpecContext, in scenarios.Input, flow results.Flow, s side) {
	ws := s.ensureWorkers(ctx)
	Expect(ws).To(HaveLen(shortCircuitPool.replicas))
	failing := firstByNode(ws, failingWorkers)
	// Cleanups run last first: the observation is kept before the
	// workers are brought back.
	DeferCleanup(func(ctx SpecContext) { recoverWorkers(ctx, in, s, ws, failing) })
	run := scenarios.NewRunAfterSetUp(ctx, NameShortCircuit, flow, ShortCircuitFixture(), ShortCircuitMilestones())
	s.record(ctx, run, ws)
	DeferCleanup(func(ctx SpecContext) {
		scenarios.KeepObservation(ctx, in, func(ctx context.Context, failed bool, why string) *results.Observation {
			return s.finish(ctx, failed, why)
		})
	})

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
	run.Reach(milestoneHeld)
	awaitNodesAsLeft(ctx, in, s, ws, failing)
	AddReportEntry(fmt.Sprintf("%s %s flow", NameShortCircuit, strings.ToUpper(string(flow))), time.Since(run.Started).Round(time.Second).String())
}

// awaitNodesAsLeft waits, before the run's end is recorded, until the
// set's Nodes show what the run left: the hung workers' Ready Unknown
// with both unreachable taints, the other worker's Ready and untainted.
// A healthy guest starved of CPU on a loaded lab host can miss two
// heartbeats (the lab's grace period is 20 s) and be Unknown for a few
// seconds; a snapshot taken then would compare the lab host's load, not
// either flow. The health check's counts did not change through the
// window, so no such blip lasted as long as its 10 s timeout. A wait that
// was needed is reported.
func awaitNodesAsLeft(ctx context.Context, in scenarios.Input, s side, ws, failing []worker) {
	hung := map[string]bool{}
	for _, w := range failing {
		hung[w.Node] = true
	}
	start, polls := time.Now(), 0
	Eventually(func(g Gomega) {
		polls++
		for _, w := range ws {
			node := nodeOf(ctx, g, s.workload(), w.Node)
			if hung[w.Node] {
				cond := readyCondition(node)
				g.Expect(cond).NotTo(BeNil(), "Node %s has no Ready condition", w.Node)
				g.Expect(cond.Status).To(Equal(corev1.ConditionUnknown), "Node %s Ready", w.Node)
				g.Expect(taintEffects(node, corev1.TaintNodeUnreachable)).To(ConsistOf(corev1.TaintEffectNoSchedule, corev1.TaintEffectNoExecute),
					"Node %s taints %s", w.Node, corev1.TaintNodeUnreachable)
				continue
			}
			g.Expect(scenarios.NodeReady(node)).To(BeTrue(), "Node %s Ready", w.Node)
			for _, taint := range []string{corev1.TaintNodeUnreachable, corev1.TaintNodeNotReady} {
				g.Expect(hasTaint(node, taint)).To(BeFalse(), "Node %s taint %s", w.Node, taint)
			}
		}
	}).WithContext(ctx).WithTimeout(interval(in, "wait-machines-running").Timeout).WithPolling(time.Second).Should(Succeed())
	if polls > 1 {
		AddReportEntry(NameShortCircuit+": waited for the set's Nodes to show the run's end", time.Since(start).Round(time.Second).String())
	}
}

func taintEffects(node *corev1.Node, key string) []corev1.TaintEffect {
	var effects []corev1.TaintEffect
	for _, t := range node.Spec.Taints {
		if t.Key == key {
			effects = append(effects, t.Effect)
		}
	}
	return effects
}

// readyCondition is the Node's Ready condition; nil when it has none.
func readyCondition(node *corev1.Node) *corev1.NodeCondition {
	for i := range node.Status.Conditions {
		if node.Status.Conditions[i].Type == corev1.NodeReady {
			return &node.Status.Conditions[i]
		}
	}
	return nil
}

// firstByNode are the n workers whose Node names sort first, so that both
// flows break the hosts of the same names.
func firstByNode(ws []worker, n int) []worker {
	sorted := append([]worker(nil), ws...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].Node < sorted[j].Node })
	return sorted[:n]
}

// recoverWorkers brings the failing workers back as an admin would, once
// the run is over: the health check goes first (a worker that comes back
// before the other would leave that one alone under the limit, and the
// health check would remediate it), then a hard reboot of each host
// through its BareMetalHost (reboot.metal3.io), which ends the hang. It
// waits for every worker's Node Ready on a new boot and untainted, so
// that no host is left hung or off for the sub-cases after it.
func recoverWorkers(ctx context.Context, in scenarios.Input, s side, ws, failing []worker) {
	By("deleting the MachineHealthCheck and power-cycling the hung workers' hosts")
	s.deleteHealthCheck(ctx)
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
		}
	}).WithContext(ctx).WithTimeout(iv.Timeout).WithPolling(2 * time.Second).Should(Succeed())
}

func nodeOf(ctx context.Context, g Gomega, c client.Client, name string) *corev1.Node {
	node := &corev1.Node{}
	g.Expect(c.Get(ctx, client.ObjectKey{Name: name}, node)).To(Succeed())
	return node
}

// expectUnreachableFor: the Node's Ready condition is Unknown (its
// kubelet stopped reporting) since at least d ago.
func expectUnreachableFor(ctx context.Context, g Gomega, c client.Client, name string, d time.Duration) {
	cond := readyCondition(nodeOf(ctx, g, c, name))
	g.Expect(cond).NotTo(BeNil(), "Node %s has no Ready condition", name)
	g.Expect(cond.Status).To(Equal(corev1.ConditionUnknown), "Node %s Ready", name)
	g.Expect(time.Since(cond.LastTransitionTime.Time)).To(BeNumerically(">", d), "Node %s Ready %s since", name, cond.Status)
}

// hardReboot asks the bare-metal operator for one hard power cycle of a
// host (the reboot annotation without a suffix, which it removes once the
// host is off).
func hardReboot(ctx context.Context, c client.Client, name client.ObjectKey) {
	host := &bmov1alpha1.BareMetalHost{}
	Expect(c.Get(ctx, name, host)).To(Succeed())
	p := client.MergeFrom(host.DeepCopy())
	if host.Annotations == nil {
		host.Annotations = map[string]string{}
	}
	host.Annotations[bmov1alpha1.RebootAnnotationPrefix] = `{"mode":"hard"}`
	Expect(c.Patch(ctx, host, p)).To(Succeed())
}
