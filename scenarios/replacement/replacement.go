package replacement

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"time"

	bmov1alpha1 "github.com/metal3-io/baremetal-operator/apis/metal3.io/v1alpha1"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/paritylab/paritylab/framework"
	"github.com/paritylab/paritylab/lab/redfish"
	"github.com/paritylab/paritylab/results"
	"github.com/paritylab/paritylab/scenarios"
	"github.com/paritylab/paritylab/scenarios/day1"
)

// The sub-cases, each a scenario in the results.
const (
	// NameReboot: Metal3Remediation under both flows.
	NameReboot = "replacement-reboot"
	// NameRebootAnnotation: MAPI's external-baremetal strategy against
	// the CAPI flow of NameReboot.
	NameRebootAnnotation = "replacement-reboot-annotation"
	// NameRebootBMCOutage: NameReboot with the worker's BMC failing
	// while the remediation needs it.
	NameRebootBMCOutage = "replacement-reboot-bmc-outage"
)

// Names are the scenario names this package's specs produce.
func Names() []string { return []string{NameReboot, NameRebootAnnotation, NameRebootBMCOutage} }

// The BMC outage: from the moment the worker's Node stops being Ready,
// its BMC answers every request about the server with 503; it recovers
// once the remediation was asked for and the bare-metal operator failed
// outageFailures times in a row to reach it (its backoff then retries
// within 8 s, or 16 s had it failed once more).
const (
	outageStatus   = http.StatusServiceUnavailable
	outageFailures = 4
)

// The worker set of each flow: one replica over a pool of its own.
const (
	poolHosts = 2
	// HostsNeeded is how many lab hosts the scenario claims, both flows.
	HostsNeeded = 2 * poolHosts
	setSuffix   = "replace"
)

// poolLabels are the labels of the pool's hosts, which each flow's set
// selects its hosts by: the pool alone, even where another scenario left
// free worker hosts in the namespace.
func poolLabels() map[string]string {
	return map[string]string{scenarios.HostRoleLabel: scenarios.RoleWorker, scenarios.HostPoolLabel: setSuffix}
}

// poolSelector selects the pool's hosts.
func poolSelector() string { return labels.SelectorFromSet(poolLabels()).String() }

// nodeIdentity watches the worker's Node alone, by name: a Node the
// remediation deletes comes back with the same name.
func nodeIdentity(w worker) framework.Watch {
	watch := scenarios.NodeIdentities
	watch.FieldSelector = "metadata.name=" + w.Node
	return watch
}

func poolHostNames() []string {
	var out []string
	for i := range poolHosts {
		out = append(out, fmt.Sprintf("replace-%d", i))
	}
	return out
}

// Milestones, the same observable events on both sides. A run starts
// with the worker Running and its MachineHealthCheck counting it healthy
// (both set up before the run).
const (
	milestoneHung        = "host-hung"
	milestoneRequested   = "remediation-requested"
	milestonePoweredOff  = "host-powered-off"
	milestoneNodeBack    = "node-ready-again"
	milestoneRemediated  = "remediation-done"
	milestoneBMCDown     = "bmc-down"
	milestoneBMCUp       = "bmc-recovered"
	adminLabel           = "paritylab.io/admin-label"
	adminAnnotation      = "paritylab.io/admin-annotation"
	propertyNodeUID      = "remediation.nodeUID"
	propertyOutOfService = "remediation.outOfServiceTaint"
	propertyNodeMetadata = "remediation.adminLabelAndAnnotation"
	propertyMachine      = "remediation.machine"
	propertyHealthBefore = "status.before"
	propertyHealthDuring = "status.during"
	propertyHealthAfter  = "status.after"
)

// Milestones are a sub-case's milestones.
func Milestones(scenario string) []results.Milestone {
	hung := results.Milestone{Name: milestoneHung, Description: "the worker's server hangs (a hang fault at its BMC, which still reports it On)"}
	requested := results.Milestone{Name: milestoneRequested,
		Description: "the MachineHealthCheck asked for remediation (a Metal3Remediation, or the external-remediation annotation)"}
	steps := []results.Milestone{hung, requested}
	if scenario == NameRebootBMCOutage {
		steps = []results.Milestone{hung,
			{Name: milestoneBMCDown, Description: "the worker's Node is no longer Ready; its BMC starts answering 503"},
			requested,
			{Name: milestoneBMCUp, Description: fmt.Sprintf("the bare-metal operator failed %d times in a row to reach the BMC; the BMC recovers", outageFailures)}}
	}
	return append(steps,
		results.Milestone{Name: milestonePoweredOff, Description: "the worker's BMC powered its server off (its operation log)"},
		results.Milestone{Name: milestoneNodeBack, Description: "the worker's Node Ready again after a new boot"},
		results.Milestone{Name: milestoneRemediated,
			Description: "the remediation request gone, the host on without error and the MachineHealthCheck counting every machine healthy"})
}

// Fixture is the day-1 cluster plus the worker set's pool.
func Fixture() results.Fixture {
	f := day1.Fixture()
	f.Name = "local-3cp-2w-replace"
	f.Shape["replacePool"] = poolHosts
	return f
}

// worker is the set's machine as the scenario follows it.
type worker struct {
	Machine types.UID
	Name    string
	Node    string
}

// healthCounts are a MachineHealthCheck's status counts.
type healthCounts struct{ expected, healthy, allowed int }

func (h healthCounts) String() string {
	return fmt.Sprintf("expected=%d healthy=%d remediationsAllowed=%d", h.expected, h.healthy, h.allowed)
}

// strategy is how a MAPI MachineHealthCheck remediates.
type strategy string

const (
	strategyMetal3Remediation strategy = "metal3remediation"
	strategyAnnotation        strategy = "external-baremetal"
)

// side is one flow's worker set and health check.
type side interface {
	// ensureWorker makes the worker set (once) and waits for its one
	// machine Running with a Ready Node.
	ensureWorker(ctx context.Context) worker
	// record starts the run's recorders on the worker set's Machines, the
	// pool's hosts, w's Node and the health check's objects.
	record(ctx context.Context, run *scenarios.Run, w worker)
	// createHealthCheck makes the MachineHealthCheck (and template).
	createHealthCheck(ctx context.Context)
	deleteHealthCheck(ctx context.Context)
	healthCheck(ctx context.Context, g Gomega) (types.UID, healthCounts)
	// requested tells whether a remediation of w is asked for.
	requested(ctx context.Context, g Gomega, w worker) bool
	host(ctx context.Context, g Gomega, w worker) *bmov1alpha1.BareMetalHost
	machineUID(ctx context.Context, g Gomega, w worker) types.UID
	workload() client.Client
	finish(ctx context.Context, failed bool, why string) *results.Observation
}

// runReboot is a reboot sub-case, the same for every side: hang the
// worker's server (with a BMC outage in NameRebootBMCOutage), and follow
// the remediation until the worker is back.
func runReboot(ctx context.Context, in scenarios.Input, run *scenarios.Run, s side, w worker, mhcUID types.UID) {
	node := markNode(ctx, s.workload(), w.Node)
	By("hanging the worker's server through its BMC")
	hungAt := time.Now()
	Expect(scenarios.HangHost(ctx, in.Lab, s.host(ctx, Default, w), redfish.HangUntilPowerOff)).To(Succeed())
	run.Reach(milestoneHung)

	f := follow{run: run, s: s, w: w, node: node, mhc: mhcUID, lab: in.Lab, outage: run.Scenario == NameRebootBMCOutage, hungAt: hungAt}
	iv := interval(in, "wait-machines-running")
	Eventually(func(g Gomega) { f.step(ctx, g) }).WithContext(ctx).WithTimeout(iv.Timeout).WithPolling(time.Second).Should(Succeed())
	f.record()
}

// follow watches one remediation from the hang to its end, reaching the
// milestones as it sees them and noting what happened to the Node.
type follow struct {
	run  *scenarios.Run
	s    side
	w    worker
	node *corev1.Node
	mhc  types.UID
	lab  *framework.Lab
	// outage plans a BMC outage (NameRebootBMCOutage).
	outage bool
	hungAt time.Time

	requested, poweredOff, nodeBack bool
	bmcDown, bmcUp                  bool
	outOfService                    bool
	during                          string
	last                            *corev1.Node
}

func (f *follow) step(ctx context.Context, g Gomega) {
	if !f.requested && f.s.requested(ctx, g, f.w) {
		f.requested = true
		_, counts := f.s.healthCheck(ctx, g)
		f.during = counts.String()
		f.run.Reach(milestoneRequested)
	}
	host := f.s.host(ctx, g, f.w)
	if f.outage {
		f.stepOutage(ctx, g, host)
	}
	if f.requested && !f.poweredOff {
		off, err := scenarios.PoweredOffSince(ctx, f.lab, host, f.hungAt)
		g.Expect(err).NotTo(HaveOccurred())
		if off {
			f.poweredOff = true
			f.run.Reach(milestonePoweredOff)
		}
	}
	node := &corev1.Node{}
	if err := f.s.workload().Get(ctx, client.ObjectKey{Name: f.w.Node}, node); err == nil {
		f.last = node
		f.outOfService = f.outOfService || hasTaint(node, corev1.TaintNodeOutOfService)
		if f.poweredOff && !f.nodeBack && scenarios.NodeReady(node) && node.Status.NodeInfo.BootID != f.node.Status.NodeInfo.BootID {
			f.nodeBack = true
			f.run.Reach(milestoneNodeBack)
		}
	}
	g.Expect(f.nodeBack).To(BeTrue(), "the worker's Node Ready after a new boot (requested %v, powered off %v)", f.requested, f.poweredOff)
	g.Expect(f.s.requested(ctx, g, f.w)).To(BeFalse(), "the remediation request is gone")
	g.Expect(host.Status.PoweredOn).To(BeTrue(), "host %s on", host.Name)
	g.Expect(host.Status.ErrorType).To(BeEmpty(), "host %s without error (%s)", host.Name, host.Status.ErrorMessage)
	for _, taint := range []string{corev1.TaintNodeOutOfService, corev1.TaintNodeUnreachable, corev1.TaintNodeNotReady} {
		// The node lifecycle controller lifts its taints a few seconds
		// after Ready: the run ends with the Node back in service.
		g.Expect(hasTaint(f.last, taint)).To(BeFalse(), "the %s taint is gone", taint)
	}
	_, counts := f.s.healthCheck(ctx, g)
	g.Expect(counts.healthy).To(Equal(counts.expected), "every machine healthy: %s", counts)
	f.run.Reach(milestoneRemediated)
}

// stepOutage takes the worker's BMC down once its Node is no longer
// Ready (before the health check's 10 s run out, so before any power
// request), and back once the remediation was asked for and the
// bare-metal operator failed outageFailures times in a row.
func (f *follow) stepOutage(ctx context.Context, g Gomega, host *bmov1alpha1.BareMetalHost) {
	switch {
	case !f.bmcDown && !f.requested && f.last != nil && !scenarios.NodeReady(f.last):
		By(fmt.Sprintf("the worker's BMC answers %d from now on", outageStatus))
		g.Expect(scenarios.FailHostBMC(ctx, f.lab, host, outageStatus)).To(Succeed())
		f.bmcDown = true
		f.run.Reach(milestoneBMCDown)
	case f.bmcDown && !f.bmcUp && f.requested && host.Status.ErrorCount >= outageFailures:
		By(fmt.Sprintf("the worker's BMC recovers after %d failed attempts (%s: %s)", host.Status.ErrorCount, host.Status.ErrorType, host.Status.ErrorMessage))
		g.Expect(scenarios.ClearHostFault(ctx, f.lab, host)).To(Succeed())
		f.bmcUp = true
		f.run.Reach(milestoneBMCUp)
	}
}

// record notes on the Machine what the remediation did to it and its Node.
func (f *follow) record() {
	uid := "same"
	if f.last.UID != f.node.UID {
		uid = "new"
	}
	f.run.SetProperty(f.w.Machine, propertyNodeUID, uid)
	f.run.SetProperty(f.w.Machine, propertyOutOfService, seen(f.outOfService))
	kept := f.last.Labels[adminLabel] == "kept" && f.last.Annotations[adminAnnotation] == "kept"
	f.run.SetProperty(f.w.Machine, propertyNodeMetadata, map[bool]string{true: "restored", false: "lost"}[kept])
	f.run.SetProperty(f.mhc, propertyHealthDuring, f.during)
}

func seen(b bool) string {
	if b {
		return "seen"
	}
	return "not seen"
}

// finishRun records what the health check and the Machine are at the end.
func finishRun(ctx context.Context, run *scenarios.Run, s side, w worker) {
	mhc, after := s.healthCheck(ctx, Default)
	run.SetProperty(mhc, propertyHealthAfter, after.String())
	same := "same"
	if s.machineUID(ctx, Default, w) != w.Machine {
		same = "replaced"
	}
	run.SetProperty(w.Machine, propertyMachine, same)
}

// markNode puts a label and an annotation on the Node as an admin would,
// to see whether the remediation keeps them.
func markNode(ctx context.Context, c client.Client, name string) *corev1.Node {
	node := &corev1.Node{}
	Expect(c.Get(ctx, client.ObjectKey{Name: name}, node)).To(Succeed())
	p := client.MergeFrom(node.DeepCopy())
	if node.Labels == nil {
		node.Labels = map[string]string{}
	}
	if node.Annotations == nil {
		node.Annotations = map[string]string{}
	}
	node.Labels[adminLabel], node.Annotations[adminAnnotation] = "kept", "kept"
	Expect(c.Patch(ctx, node, p)).To(Succeed())
	return node
}

func waitHealthy(ctx context.Context, in scenarios.Input, s side) (types.UID, healthCounts) {
	By("waiting for the MachineHealthCheck to count the worker healthy")
	var uid types.UID
	var counts healthCounts
	iv := interval(in, "wait-object")
	Eventually(func(g Gomega) {
		uid, counts = s.healthCheck(ctx, g)
		g.Expect(counts.expected).To(Equal(1))
		g.Expect(counts.healthy).To(Equal(1))
	}).WithContext(ctx).WithTimeout(iv.Timeout).WithPolling(iv.Polling).Should(Succeed())
	return uid, counts
}

func hasTaint(node *corev1.Node, key string) bool {
	if node == nil {
		return false
	}
	for _, t := range node.Spec.Taints {
		if t.Key == key {
			return true
		}
	}
	return false
}

func interval(in scenarios.Input, key string) framework.Interval {
	iv, err := in.Config.Interval("replacement", key)
	Expect(err).NotTo(HaveOccurred())
	return iv
}

// Spec declares the scenario's specs inside the suite's Ordered Describe:
// the MAPI flow with each strategy, the CAPI flow, then the diffs.
func Spec(inputGetter func() scenarios.Input) {
	var mapiSide *machineSetSide
	mapiSpec := func(name string, how strategy, title string) {
		It(title, func(ctx SpecContext) {
			in := inputGetter()
			base := day1.Cluster(ctx, in, results.FlowMAPI)
			if mapiSide == nil || mapiSide.base != base {
				mapiSide = newMachineSetSide(in, base)
			}
			mapiSide.strategy = how
			rebootSpec(ctx, in, name, results.FlowMAPI, mapiSide)
		}, SpecTimeout(30*time.Minute))
	}
	mapiSpec(NameReboot, strategyMetal3Remediation,
		"MAPI flow: a worker's server hangs; a MachineHealthCheck with a Metal3RemediationTemplate power-cycles it")
	mapiSpec(NameRebootAnnotation, strategyAnnotation,
		"MAPI flow: a worker's server hangs; a MachineHealthCheck with the external-baremetal strategy power-cycles it")
	mapiSpec(NameRebootBMCOutage, strategyMetal3Remediation,
		"MAPI flow: a worker's server hangs and its BMC fails for a while; a MachineHealthCheck with a Metal3RemediationTemplate power-cycles it")
	var capiSide *machineDeploymentSide
	capiSpec := func(name string, title string, alsoAs ...string) {
		It(title, func(ctx SpecContext) {
			in := inputGetter()
			base := day1.Cluster(ctx, in, results.FlowCAPI)
			if capiSide == nil || capiSide.base != base {
				capiSide = newMachineDeploymentSide(in, base)
			}
			rebootSpec(ctx, in, name, results.FlowCAPI, capiSide, alsoAs...)
		}, SpecTimeout(30*time.Minute))
	}
	capiSpec(NameReboot, "CAPI flow: a worker's server hangs; a MachineHealthCheck with CAPM3's Metal3RemediationTemplate power-cycles it",
		NameRebootAnnotation)
	capiSpec(NameRebootBMCOutage,
		"CAPI flow: a worker's server hangs and its BMC fails for a while; a MachineHealthCheck with CAPM3's Metal3RemediationTemplate power-cycles it")
	for _, name := range Names() {
		scenarios.DiffSpec(name, inputGetter)
	}
}

// rebootSpec runs the reboot sub-case on a side and keeps its observation
// as scenario name (and as each of alsoAs: the same run compared with
// another of the other flow's).
func rebootSpec(ctx SpecContext, in scenarios.Input, name string, flow results.Flow, s side, alsoAs ...string) {
	// The set-up, not compared: the worker, and the health check counting
	// it healthy (CAPI's takes some 15 s longer to report its first
	// status; the run is about the failure and what follows).
	w := s.ensureWorker(ctx)
	// Cleanups run last first: the observation is kept before the health
	// check goes, so that its deletion is not part of the run.
	DeferCleanup(func(ctx SpecContext) { s.deleteHealthCheck(ctx) })
	s.createHealthCheck(ctx)
	mhcUID, before := waitHealthy(ctx, in, s)

	run := scenarios.NewRun(name, flow, Fixture(), Milestones(name))
	run.EventsOnlyFromStart = true
	s.record(ctx, run, w)
	run.SetProperty(mhcUID, propertyHealthBefore, before.String())
	DeferCleanup(func(ctx SpecContext) {
		scenarios.KeepObservation(ctx, in, func(ctx context.Context, failed bool, why string) *results.Observation {
			obs := s.finish(ctx, failed, why)
			for _, other := range alsoAs {
				copied := *obs
				copied.Scenario = other
				Expect(in.Observations.Add(in.ArtifactsDir, &copied)).To(Succeed())
			}
			return obs
		})
	})
	runReboot(ctx, in, run, s, w, mhcUID)
	finishRun(ctx, run, s, w)
	AddReportEntry(fmt.Sprintf("%s %s flow", name, strings.ToUpper(string(flow))), time.Since(run.Started).Round(time.Second).String())
}
