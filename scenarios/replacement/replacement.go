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
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/paritylab/paritylab/framework"
	"github.com/paritylab/paritylab/lab/redfish"
	"github.com/paritylab/paritylab/lab/workload/nodefence"
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
func Names() []string {
	return []string{NameReboot, NameRebootAnnotation, NameRebootBMCOutage, NameStaysDead, NameShortCircuit, NameOwnerless, NameControlPlane, NameControlPlaneStaysDead}
}

// The BMC outage: from the moment the worker's Node stops being Ready,
// its BMC answers every request about the server with 503; it recovers
// once the remediation was asked for and the bare-metal operator failed
// outageFailures times in a row to reach it (its backoff then retries
// within 8 s, or 16 s had it failed once more).
const (
	outageStatus   = http.StatusServiceUnavailable
	outageFailures = 4
)

// nodeIdentities watch each worker's Node by name: a Node the
// remediation deletes comes back with the same name.
func nodeIdentities(ws []worker) []framework.Watch {
	var out []framework.Watch
	for _, w := range ws {
		watch := scenarios.NodeIdentities
		watch.FieldSelector = "metadata.name=" + w.Node
		out = append(out, watch)
	}
	return out
}

// recordJoinedNode has the run record the identity of a Node that
// joined during it and compare its state at the end (ws, the workers the
// run compares the Nodes of, with the Node added), unless it does already.
func recordJoinedNode(ctx context.Context, run *scenarios.Run, cfg *rest.Config, ws []worker, name string) []worker {
	for _, w := range ws {
		if w.Node == name {
			return ws
		}
	}
	joined := worker{Node: name}
	Expect(run.Record(ctx, cfg, nil, nodeIdentities([]worker{joined})...)).To(Succeed())
	return append(ws, joined)
}

// remediations watch the remediation request of each worker by name (a
// request is named after its Machine), so that a request another
// sub-case left behind (CAPM3's, once it gave up, stays with its Machine)
// is not this run's.
func remediations(resource schema.GroupVersionResource, namespace string, ws []worker) []framework.Watch {
	var out []framework.Watch
	for _, w := range ws {
		out = append(out, framework.Watch{Resource: resource, Namespace: namespace, Role: "remediation", FieldSelector: "metadata.name=" + w.Name})
	}
	return out
}

// withoutNode are the workers but the one on the named Node.
func withoutNode(ws []worker, name string) []worker {
	var out []worker
	for _, w := range ws {
		if w.Node != name {
			out = append(out, w)
		}
	}
	return out
}

// nodeNames are the workers' Nodes' names.
func nodeNames(ws []worker) []string {
	var out []string
	for _, w := range ws {
		out = append(out, w.Node)
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
	propertyRefused      = "remediation.refusedRestores"
	propertyMachine      = "remediation.machine"
	propertyHealthBefore = "status.before"
	propertyHealthDuring = "status.during"
	propertyHealthAfter  = "status.after"
)

// Milestones are a sub-case's milestones.
func Milestones(scenario string) []results.Milestone {
	hung := results.Milestone{Name: milestoneHung, Description: "the worker's server hangs (a hang fault at its BMC, which still reports it On)"}
	if scenario == NameControlPlane {
		hung.Description = "a control-plane host's server hangs (a hang fault at its BMC, which still reports it On); " + noEtcd
	}
	requested := results.Milestone{Name: milestoneRequested,
		Description: "the MachineHealthCheck asked for remediation (a Metal3Remediation, or the external-remediation annotation)"}
	steps := []results.Milestone{hung, requested}
	if scenario == NameRebootBMCOutage {
		steps = []results.Milestone{hung,
			{Name: milestoneBMCDown, Description: "the worker's Node is no longer Ready; its BMC starts answering 503"},
			requested,
			{Name: milestoneBMCUp, Description: fmt.Sprintf("the bare-metal operator failed %d times in a row to reach the BMC; the BMC recovers", outageFailures)}}
	}
	who := "worker"
	if scenario == NameControlPlane {
		who = "control-plane host"
	}
	return append(steps,
		results.Milestone{Name: milestonePoweredOff, Description: fmt.Sprintf("the %s's BMC powered its server off (its operation log)", who)},
		results.Milestone{Name: milestoneNodeBack, Description: fmt.Sprintf("the %s's Node Ready again after a new boot", who)},
		results.Milestone{Name: milestoneRemediated,
			Description: "the remediation request gone, the host on without error and the MachineHealthCheck counting every machine healthy"})
}

// Fixture is the day-1 cluster plus the worker set's pool.
func Fixture() results.Fixture {
	f := day1.Fixture()
	f.Name = "local-3cp-2w-replace"
	f.Shape["replacePool"] = rebootPool.hosts
	return f
}

// worker is the set's machine as the scenario follows it.
type worker struct {
	Machine types.UID
	Name    string
	Node    string
	// Host names its BareMetalHost, once the scenario needs it after the
	// Machine is gone.
	Host string
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
	// ensureWorkers makes the worker set (once) and waits for its
	// machines Running with Ready Nodes.
	ensureWorkers(ctx context.Context) []worker
	// record starts the run's recorders on the worker set's Machines, the
	// pool's hosts, the workers' Nodes (identity: only one may be named,
	// as a field selector names one) and the health check's objects.
	record(ctx context.Context, run *scenarios.Run, ws []worker)
	// createHealthCheck makes the MachineHealthCheck (and template).
	createHealthCheck(ctx context.Context, hc healthCheck)
	deleteHealthCheck(ctx context.Context)
	healthCounts(ctx context.Context, g Gomega) (types.UID, healthCounts)
	// requested tells whether a remediation of w is asked for.
	requested(ctx context.Context, g Gomega, w worker) bool
	host(ctx context.Context, g Gomega, w worker) *bmov1alpha1.BareMetalHost
	// hostNamed is a host of the set's pool by name.
	hostNamed(ctx context.Context, g Gomega, name string) *bmov1alpha1.BareMetalHost
	// markedUnhealthy: the host carries the annotation by which the
	// remediation marks a host it gave up on.
	markedUnhealthy(host *bmov1alpha1.BareMetalHost) bool
	// liveMachines are the set's Machines not being deleted, however
	// many; Node is set once the Machine is Running with a nodeRef.
	liveMachines(ctx context.Context, g Gomega) []worker
	// recordNode adds a Node that joined during the run to what it
	// records and compares.
	recordNode(ctx context.Context, run *scenarios.Run, name string)
	// forgetNode drops a Node from those the run compares at the end
	// (its identity stays recorded).
	forgetNode(name string)
	// expectMachineHealthy: w's Machine says it is healthy again, as far
	// as its API tells (CAPI: Ready and HealthCheckSucceeded True, which
	// the health check writes when it deletes the remediation request; a
	// MAPI Machine reports no node health, only its phase, Running).
	expectMachineHealthy(ctx context.Context, g Gomega, w worker)
	// requestState says what became of w's remediation request:
	// requestGone, requestLive, or being deleted and held by which
	// finalizers.
	requestState(ctx context.Context, g Gomega, w worker) string
	// ownerAsked: the health check, having no remediation template,
	// handed w's Machine to its owner, as far as the API tells: MAO's
	// event for a Machine it skips as having no controller owner, or for
	// one it deleted; CAPI's OwnerRemediated False. A Machine gone or
	// being deleted was handed over too.
	ownerAsked(ctx context.Context, g Gomega, w worker) bool
	// rebootHost has w's BareMetalHost power-cycle its server once, hard
	// (reboot.metal3.io), as an admin does.
	rebootHost(ctx context.Context, w worker)
	// machineExists: w's Machine is still there, deleted or not.
	machineExists(ctx context.Context, g Gomega, w worker) bool
	// deleteMachine deletes w's Machine, as an admin does.
	deleteMachine(ctx context.Context, g Gomega, w worker)
	machineUID(ctx context.Context, g Gomega, w worker) types.UID
	// restoresWithUpdate: the remediation deletes the Node and writes its
	// labels and annotations back with one update (startFence).
	restoresWithUpdate() bool
	cluster() *scenarios.Cluster
	workload() client.Client
	finish(ctx context.Context, failed bool, why string) *results.Observation
}

// runReboot is a reboot sub-case, the same for every side: hang the
// worker's server (with a BMC outage in NameRebootBMCOutage), and follow
// the remediation until the worker is back.
func runReboot(ctx context.Context, in scenarios.Input, run *scenarios.Run, s side, w worker, mhcUID types.UID) {
	node := markNode(ctx, s.workload(), w.Node)
	var fence *nodefence.Fence
	if s.restoresWithUpdate() {
		fence = startFence(ctx, s, w)
	}
	By("hanging the worker's server through its BMC")
	hungAt := time.Now()
	Expect(scenarios.HangHost(ctx, in.Lab, s.host(ctx, Default, w), redfish.HangUntilPowerOff)).To(Succeed())
	run.Reach(milestoneHung)

	f := follow{run: run, s: s, w: w, node: node, mhc: mhcUID, lab: in.Lab, outage: run.Scenario == NameRebootBMCOutage, hungAt: hungAt}
	iv := interval(in, "wait-machines-running")
	Eventually(func(g Gomega) { f.step(ctx, g) }).WithContext(ctx).WithTimeout(iv.Timeout).WithPolling(time.Second).Should(Succeed())
	if fence != nil {
		expectFenceKeptOrder(fence.Report())
	}
	f.record()
	refused, err := scenarios.RefusedRestores(scenarios.RefusedRestoresInput{Lab: in.Lab, Cluster: s.cluster(), Node: w.Node, Label: adminLabel, Since: run.Started})
	Expect(err).NotTo(HaveOccurred())
	run.SetProperty(w.Machine, propertyRefused, orNone(refused))
}

// countsWhileUnhealthy are the health check's counts once it counts a
// Machine unhealthy, or "" before: CAPI's health check creates the
// remediation request before it writes its status in the same
// reconcile, so a poll may see the request with the counts of the pass
// before.
func countsWhileUnhealthy(ctx context.Context, g Gomega, s side) string {
	_, counts := s.healthCounts(ctx, g)
	if counts.healthy < counts.expected {
		return counts.String()
	}
	return ""
}

// startFence puts the lab's node fence on the worker's Node (marked by
// the admin label) for the run, so that the remediation's restore of the
// recreated Node's labels and annotations lands before any other write
// to it: OpenShift's Metal3Remediation writes them back with one update
// from its cache and only logs a conflict, so a run in which the kubelet
// or a controller wrote the young Node in between would lose them, now
// and then. Only a flow whose remediation recreates the Node and
// restores it with an update gets a fence: the external-baremetal path
// patches (no conflict is possible) once the Machine controller hears of
// the new Node, which needs nodelink's write to it first, and CAPM3 keeps
// the Node.
func startFence(ctx context.Context, s side, w worker) *nodefence.Fence {
	By("holding other writes to the worker's Node, once recreated, until the remediation restored it")
	fence, err := nodefence.Start(ctx, nodefence.Options{Config: s.cluster().WorkloadConfig, Node: w.Node, Marker: adminLabel,
		Mode: nodefence.RestoreFirst, Logger: GinkgoLogr.WithName("node-fence")})
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(func(ctx SpecContext) { Expect(fence.Stop(ctx)).To(Succeed()) })
	return fence
}

// expectFenceKeptOrder fails the run when the fence did not choose the
// order of the writes: a hold that ran out let a write land before the
// restore, as chance would have.
func expectFenceKeptOrder(r nodefence.Report) {
	Expect(r.Errors).To(BeEmpty(), "the node fence's own reads and writes")
	Expect(r.HoldsRunOut).To(BeZero(), "writes the node fence let go before any restore, the order left to chance (%+v)", r)
}

func orNone(items []string) string {
	if len(items) == 0 {
		return "none"
	}
	return strings.Join(items, "; ")
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
		f.run.Reach(milestoneRequested)
	}
	if f.requested && f.during == "" {
		f.during = countsWhileUnhealthy(ctx, g, f.s)
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
	g.Expect(f.during).NotTo(BeEmpty(), "the health check's counts while the worker was unhealthy")
	g.Expect(f.s.requested(ctx, g, f.w)).To(BeFalse(), "the remediation request is gone")
	g.Expect(host.Status.PoweredOn).To(BeTrue(), "host %s on", host.Name)
	g.Expect(host.Status.ErrorType).To(BeEmpty(), "host %s without error (%s)", host.Name, host.Status.ErrorMessage)
	for _, taint := range []string{corev1.TaintNodeOutOfService, corev1.TaintNodeUnreachable, corev1.TaintNodeNotReady} {
		// The node lifecycle controller lifts its taints a few seconds
		// after Ready: the run ends with the Node back in service.
		g.Expect(hasTaint(f.last, taint)).To(BeFalse(), "the %s taint is gone", taint)
	}
	_, counts := f.s.healthCounts(ctx, g)
	g.Expect(counts.healthy).To(Equal(counts.expected), "every machine healthy: %s", counts)
	// The Machine's own summary follows the health check's by a
	// reconcile of the Machine controller; the run ends on both.
	f.s.expectMachineHealthy(ctx, g, f.w)
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
	mhc, after := s.healthCounts(ctx, Default)
	run.SetProperty(mhc, propertyHealthAfter, after.String())
	same := "same"
	if s.machineUID(ctx, Default, w) != w.Machine {
		same = "replaced"
	}
	run.SetProperty(w.Machine, propertyMachine, same)
}

// uidOrReplacement is the UID of the Machine named name among a set's
// live Machines ms, or of the set's one Machine that took its place.
func uidOrReplacement[M any, P interface {
	*M
	client.Object
}](ms []M, name string) types.UID {
	for i := range ms {
		if P(&ms[i]).GetName() == name {
			return P(&ms[i]).GetUID()
		}
	}
	return P(&ms[0]).GetUID()
}

// What a remediation request is at the end of a run (side.requestState).
const (
	requestGone = "gone"
	requestLive = "live"
)

// requestStateOf describes a remediation request got with err.
func requestStateOf(g Gomega, obj client.Object, err error) string {
	if apierrors.IsNotFound(err) {
		return requestGone
	}
	g.Expect(err).NotTo(HaveOccurred())
	if obj.GetDeletionTimestamp().IsZero() {
		return requestLive
	}
	return "being deleted, held by its finalizer " + strings.Join(obj.GetFinalizers(), ", ")
}

// expectInService: the Node is Ready, the node lifecycle controller's
// taints are gone (it lifts them seconds after Ready) and the health
// check counts every machine of the set healthy.
func expectInService(ctx context.Context, g Gomega, s side, name string) {
	node := &corev1.Node{}
	g.Expect(s.workload().Get(ctx, client.ObjectKey{Name: name}, node)).To(Succeed())
	g.Expect(scenarios.NodeReady(node)).To(BeTrue(), "Node %s Ready", name)
	for _, taint := range []string{corev1.TaintNodeOutOfService, corev1.TaintNodeUnreachable, corev1.TaintNodeNotReady} {
		g.Expect(hasTaint(node, taint)).To(BeFalse(), "Node %s taint %s", name, taint)
	}
	_, counts := s.healthCounts(ctx, g)
	g.Expect(counts.healthy).To(Equal(counts.expected), "every machine healthy: %s", counts)
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

func waitHealthy(ctx context.Context, in scenarios.Input, s side, workers int) (types.UID, healthCounts) {
	By(fmt.Sprintf("waiting for the MachineHealthCheck to count the %d worker(s) healthy", workers))
	var uid types.UID
	var counts healthCounts
	iv := interval(in, "wait-object")
	Eventually(func(g Gomega) {
		uid, counts = s.healthCounts(ctx, g)
		g.Expect(counts.expected).To(Equal(workers))
		g.Expect(counts.healthy).To(Equal(workers))
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
	mapiSpec := func(name string, how strategy, what string) {
		It(scenarios.FlowSpecText(results.FlowMAPI, what, name), func(ctx SpecContext) {
			in := inputGetter()
			base := day1.Cluster(ctx, in, results.FlowMAPI)
			if mapiSide == nil || mapiSide.base != base {
				mapiSide = newMachineSetSide(in, base, rebootPool)
			}
			mapiSide.strategy = how
			rebootSpec(ctx, in, name, results.FlowMAPI, mapiSide)
		}, SpecTimeout(30*time.Minute))
	}
	mapiSpec(NameReboot, strategyMetal3Remediation,
		"a worker's server hangs; a MachineHealthCheck with a Metal3RemediationTemplate power-cycles it")
	mapiSpec(NameRebootAnnotation, strategyAnnotation,
		"a worker's server hangs; a MachineHealthCheck with the external-baremetal strategy power-cycles it")
	mapiSpec(NameRebootBMCOutage, strategyMetal3Remediation,
		"a worker's server hangs and its BMC fails for a while; a MachineHealthCheck with a Metal3RemediationTemplate power-cycles it")
	It(scenarios.FlowSpecText(results.FlowMAPI, "a worker's server stays dead; a MachineHealthCheck with a Metal3RemediationTemplate reboots it twice, gives up and the Machine is replaced", NameStaysDead), func(ctx SpecContext) {
		in := inputGetter()
		base := day1.Cluster(ctx, in, results.FlowMAPI)
		if mapiSide == nil || mapiSide.base != base {
			mapiSide = newMachineSetSide(in, base, rebootPool)
		}
		mapiSide.strategy = strategyMetal3Remediation
		staysDeadSpec(ctx, in, results.FlowMAPI, mapiSide)
	}, SpecTimeout(30*time.Minute))
	It(scenarios.FlowSpecText(results.FlowMAPI, "two of three workers' servers hang; a MachineHealthCheck with maxUnhealthy 1 remediates neither", NameShortCircuit), func(ctx SpecContext) {
		in := inputGetter()
		s := newMachineSetSide(in, day1.Cluster(ctx, in, results.FlowMAPI), shortCircuitPool)
		s.strategy = strategyMetal3Remediation
		shortCircuitSpec(ctx, in, results.FlowMAPI, s)
	}, SpecTimeout(30*time.Minute))
	It(scenarios.FlowSpecText(results.FlowMAPI, "an owner-less ZTP day-2 worker's server hangs under a MachineHealthCheck without a remediation template", NameOwnerless), func(ctx SpecContext) {
		in := inputGetter()
		s := newMachineSetSide(in, day1.Cluster(ctx, in, results.FlowMAPI), day2Pool)
		ownerlessSpec(ctx, in, results.FlowMAPI, s)
	}, SpecTimeout(30*time.Minute))
	var mapiMasters *machineSetSide
	It(scenarios.FlowSpecText(results.FlowMAPI, "a control-plane host's server hangs; a MachineHealthCheck over the master Machines with a Metal3RemediationTemplate power-cycles it", NameControlPlane), func(ctx SpecContext) {
		in := inputGetter()
		base := day1.Cluster(ctx, in, results.FlowMAPI)
		if mapiMasters == nil || mapiMasters.base != base {
			mapiMasters = newMachineSetSide(in, base, controlPlanePool)
			mapiMasters.strategy = strategyMetal3Remediation
		}
		rebootSpec(ctx, in, NameControlPlane, results.FlowMAPI, mapiMasters)
	}, SpecTimeout(30*time.Minute))
	It(scenarios.FlowSpecText(results.FlowMAPI, "a control-plane host's server stays dead; the Metal3Remediation reboots it twice, gives up, and nothing replaces the master", NameControlPlaneStaysDead), func(ctx SpecContext) {
		in := inputGetter()
		base := day1.Cluster(ctx, in, results.FlowMAPI)
		if mapiMasters == nil || mapiMasters.base != base {
			mapiMasters = newMachineSetSide(in, base, controlPlanePool)
			mapiMasters.strategy = strategyMetal3Remediation
		}
		controlPlaneStaysDeadSpec(ctx, in, results.FlowMAPI, mapiMasters)
	}, SpecTimeout(30*time.Minute))
	var capiSide *machineDeploymentSide
	capiSpec := func(name string, what string, alsoAs ...string) {
		It(scenarios.FlowSpecText(results.FlowCAPI, what, append([]string{name}, alsoAs...)...), func(ctx SpecContext) {
			in := inputGetter()
			base := day1.Cluster(ctx, in, results.FlowCAPI)
			if capiSide == nil || capiSide.base != base {
				capiSide = newMachineDeploymentSide(in, base, rebootPool)
			}
			rebootSpec(ctx, in, name, results.FlowCAPI, capiSide, alsoAs...)
		}, SpecTimeout(30*time.Minute))
	}
	capiSpec(NameReboot, "a worker's server hangs; a MachineHealthCheck with CAPM3's Metal3RemediationTemplate power-cycles it",
		NameRebootAnnotation)
	capiSpec(NameRebootBMCOutage,
		"a worker's server hangs and its BMC fails for a while; a MachineHealthCheck with CAPM3's Metal3RemediationTemplate power-cycles it")
	It(scenarios.FlowSpecText(results.FlowCAPI, "a worker's server stays dead; a MachineHealthCheck with CAPM3's Metal3RemediationTemplate reboots it twice and gives up", NameStaysDead), func(ctx SpecContext) {
		in := inputGetter()
		base := day1.Cluster(ctx, in, results.FlowCAPI)
		if capiSide == nil || capiSide.base != base {
			capiSide = newMachineDeploymentSide(in, base, rebootPool)
		}
		staysDeadSpec(ctx, in, results.FlowCAPI, capiSide)
	}, SpecTimeout(30*time.Minute))
	It(scenarios.FlowSpecText(results.FlowCAPI, "two of three workers' servers hang; a MachineHealthCheck with unhealthyLessThanOrEqualTo 1 remediates neither", NameShortCircuit), func(ctx SpecContext) {
		in := inputGetter()
		s := newMachineDeploymentSide(in, day1.Cluster(ctx, in, results.FlowCAPI), shortCircuitPool)
		shortCircuitSpec(ctx, in, results.FlowCAPI, s)
	}, SpecTimeout(30*time.Minute))
	It(scenarios.FlowSpecText(results.FlowCAPI, "a MachineDeployment's day-2 worker's server hangs under a MachineHealthCheck without a remediation template", NameOwnerless), func(ctx SpecContext) {
		in := inputGetter()
		s := newMachineDeploymentSide(in, day1.Cluster(ctx, in, results.FlowCAPI), day2Pool)
		ownerlessSpec(ctx, in, results.FlowCAPI, s)
	}, SpecTimeout(30*time.Minute))
	var capiControlPlane *machineDeploymentSide
	It(scenarios.FlowSpecText(results.FlowCAPI, "a control-plane host's server hangs; a MachineHealthCheck over the control plane's Machines with CAPM3's Metal3RemediationTemplate power-cycles it", NameControlPlane), func(ctx SpecContext) {
		in := inputGetter()
		base := day1.Cluster(ctx, in, results.FlowCAPI)
		if capiControlPlane == nil || capiControlPlane.base != base {
			capiControlPlane = newMachineDeploymentSide(in, base, controlPlanePool)
		}
		rebootSpec(ctx, in, NameControlPlane, results.FlowCAPI, capiControlPlane)
	}, SpecTimeout(30*time.Minute))
	It(scenarios.FlowSpecText(results.FlowCAPI, "a control-plane host's server stays dead; CAPM3 reboots it twice, gives up, and nothing replaces the control-plane Machine", NameControlPlaneStaysDead), func(ctx SpecContext) {
		in := inputGetter()
		base := day1.Cluster(ctx, in, results.FlowCAPI)
		if capiControlPlane == nil || capiControlPlane.base != base {
			capiControlPlane = newMachineDeploymentSide(in, base, controlPlanePool)
		}
		controlPlaneStaysDeadSpec(ctx, in, results.FlowCAPI, capiControlPlane)
	}, SpecTimeout(30*time.Minute))
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
	ws := s.ensureWorkers(ctx)
	w := target(ws)
	// Cleanups run last first: the observation is kept before the health
	// check goes, so that its deletion is not part of the run.
	DeferCleanup(func(ctx SpecContext) { s.deleteHealthCheck(ctx) })
	s.createHealthCheck(ctx, rebootHealthCheck)
	mhcUID, before := waitHealthy(ctx, in, s, len(ws))

	run := scenarios.NewRunAfterSetUp(ctx, name, flow, Fixture(), Milestones(name))
	// Every machine of the set: the others' Nodes and hosts must be
	// left alone (a control plane's two healthy members).
	s.record(ctx, run, ws)
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
