package replacement

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	bmov1alpha1 "github.com/metal3-io/baremetal-operator/apis/metal3.io/v1alpha1"
	capm3v1beta1 "github.com/metal3-io/cluster-api-provider-metal3/api/v1beta1"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	machinev1beta1 "github.com/openshift/api/machine/v1beta1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/paritylab/paritylab/framework"
	"github.com/paritylab/paritylab/lab/mapi"
	"github.com/paritylab/paritylab/results"
	"github.com/paritylab/paritylab/scenarios"
)

// Resources of the MAPI side's remediation.
var (
	mapiHealthChecks       = schema.GroupVersionResource{Group: "machine.openshift.io", Version: "v1beta1", Resource: "machinehealthchecks"}
	mapiMetal3Remediations = capm3v1beta1.GroupVersion.WithResource("metal3remediations")
)

// remediationStrategyAnnotation on a MAPI MachineHealthCheck chooses
// MAO's external-baremetal remediation (machinehealthcheck_controller.go).
const remediationStrategyAnnotation = "machine.openshift.io/remediation-strategy"

// machineSetSide is the MAPI flow: a MachineSet in the spoke over a pool
// of hosts in its machine API namespace, and a MachineHealthCheck there.
type machineSetSide struct {
	in       scenarios.Input
	base     *scenarios.Cluster
	spoke    client.Client
	pool     pool
	name     string
	strategy strategy
	run      *scenarios.Run
	workers  []worker
}

func newMachineSetSide(in scenarios.Input, base *scenarios.Cluster, p pool) *machineSetSide {
	return &machineSetSide{in: in, base: base, spoke: base.Workload, pool: p}
}

func (s *machineSetSide) cluster() *scenarios.Cluster { return s.base }

// restoresWithUpdate: OpenShift's Metal3Remediation does; the
// external-baremetal actuator patches.
func (s *machineSetSide) restoresWithUpdate() bool { return s.strategy != strategyAnnotation }

func (s *machineSetSide) workload() client.Client { return s.spoke }

// selector selects the set's Machines: the MachineSet's, or the
// installer's control-plane Machines.
func (s *machineSetSide) selector() map[string]string {
	switch {
	case s.pool.controlPlane:
		return map[string]string{mapi.RoleLabel: "master"}
	case s.pool.ztpDay2:
		return map[string]string{healthCheckLabel: s.pool.name}
	}
	return map[string]string{mapi.MachineSetLabel: s.name}
}

func (s *machineSetSide) ensureWorkers(ctx context.Context) []worker {
	if s.name == "" && s.pool.controlPlane {
		s.manageMasterPower(ctx)
		// The health check's name: not a word the objects carry as a
		// value (the hosts' role label says control-plane), which the
		// names' normalisation would hide.
		s.name = "masters"
	}
	if s.name == "" && s.pool.ztpDay2 {
		s.addZTPWorker(ctx)
		s.name = "ztp-" + s.pool.name
	}
	if s.name == "" {
		By(fmt.Sprintf("moving the %s pool's hosts into the spoke's machine API namespace and creating a worker MachineSet of %d replica(s)", s.pool.name, s.pool.replicas))
		var claims []framework.HostClaim
		for _, h := range s.pool.hostNames() {
			claims = append(claims, framework.HostClaim{Cluster: s.spoke, Namespace: scenarios.MachineAPINamespace, Name: h, Labels: s.pool.labels()})
		}
		_, err := s.in.Hosts.Claim(ctx, claims...)
		Expect(err).NotTo(HaveOccurred())
		ms := scenarios.WorkerMachineSet(ctx, s.spoke, s.pool.name, int32(s.pool.replicas))
		Expect(scenarios.SelectHosts(ms, s.pool.labels())).To(Succeed())
		Expect(s.spoke.Create(ctx, ms)).To(Succeed())
		s.name = ms.Name
	}
	By("waiting for the MachineSet's Machines Running with Ready Nodes")
	var ws []worker
	iv := interval(s.in, "wait-machines-running")
	Eventually(func(g Gomega) {
		ws = nil
		for _, m := range s.machines(ctx, g) {
			g.Expect(m.Status.Phase).To(HaveValue(Equal(machinev1beta1.PhaseRunning)), "Machine %s", m.Name)
			g.Expect(m.Status.NodeRef).NotTo(BeNil(), "Machine %s nodeRef", m.Name)
			scenarios.ExpectNodeReady(ctx, g, s.spoke, m.Status.NodeRef.Name)
			ws = append(ws, worker{Machine: m.UID, Name: m.Name, Node: m.Status.NodeRef.Name})
		}
	}).WithContext(ctx).WithTimeout(iv.Timeout).WithPolling(iv.Polling).Should(Succeed())
	return ws
}

// machines are the set's Machines that are not being deleted, as many as
// its replicas.
func (s *machineSetSide) machines(ctx context.Context, g Gomega) []machinev1beta1.Machine {
	list := &machinev1beta1.MachineList{}
	g.Expect(s.spoke.List(ctx, list, client.InNamespace(scenarios.MachineAPINamespace),
		client.MatchingLabels(s.selector()))).To(Succeed())
	var live []machinev1beta1.Machine
	for _, m := range list.Items {
		if m.DeletionTimestamp.IsZero() {
			live = append(live, m)
		}
	}
	g.Expect(live).To(HaveLen(s.pool.replicas), "Machines of %s", s.name)
	sort.Slice(live, func(i, j int) bool { return live[i].Name < live[j].Name })
	return live
}

func (s *machineSetSide) machineUID(ctx context.Context, g Gomega, w worker) types.UID {
	return uidOrReplacement(s.machines(ctx, g), w.Name)
}

func (s *machineSetSide) record(ctx context.Context, run *scenarios.Run, ws []worker) {
	ns := scenarios.MachineAPINamespace
	s.run, s.workers = run, ws
	hosts := framework.Watch{Resource: scenarios.BareMetalHosts, Namespace: ns, Role: "host", Interchangeable: true, LabelSelector: s.pool.selector()}
	if s.pool.ztpDay2 {
		hosts.LabelSelector, hosts.FieldSelector = "", "metadata.name="+s.pool.ztpHost()
	}
	watches := []framework.Watch{
		{Resource: scenarios.MAPIMachines, Namespace: ns, Role: "machine", LabelSelector: labels.SelectorFromSet(s.selector()).String()},
		hosts,
		{Resource: mapiHealthChecks, Namespace: ns, Role: "health-check", FieldSelector: "metadata.name=" + s.name},
	}
	watches = append(watches, remediations(mapiMetal3Remediations, ns, ws)...)
	Expect(run.Record(ctx, s.base.WorkloadConfig, []string{ns}, append(watches, nodeIdentities(ws)...)...)).To(Succeed())
	run.SetCluster(s.base.Namespace)
}

// createHealthCheck: Ready Unknown for 10s or False for 300s makes a
// set's Machine unhealthy; the strategy decides who power-cycles it.
func (s *machineSetSide) createHealthCheck(ctx context.Context, hc healthCheck) {
	mhc := &machinev1beta1.MachineHealthCheck{
		ObjectMeta: metav1.ObjectMeta{Name: s.name, Namespace: scenarios.MachineAPINamespace},
		Spec: machinev1beta1.MachineHealthCheckSpec{
			Selector: metav1.LabelSelector{MatchLabels: s.selector()},
			UnhealthyConditions: []machinev1beta1.UnhealthyCondition{
				{Type: corev1.NodeReady, Status: corev1.ConditionUnknown, Timeout: metav1.Duration{Duration: unreachableAfter}},
				{Type: corev1.NodeReady, Status: corev1.ConditionFalse, Timeout: metav1.Duration{Duration: notReadyAfter}},
			},
			NodeStartupTimeout: &metav1.Duration{Duration: nodeStartupTimeout},
			MaxUnhealthy:       ptr.To(ptr.Deref(hc.maxUnhealthy, intstr.FromString("100%"))),
		},
	}
	switch {
	case hc.ownerRemediates:
		By("creating a MachineHealthCheck without a remediation template or strategy")
	case s.strategy == strategyAnnotation:
		By("creating a MachineHealthCheck with the external-baremetal remediation strategy")
		mhc.Annotations = map[string]string{remediationStrategyAnnotation: string(strategyAnnotation)}
	default:
		By("creating a Metal3RemediationTemplate (Reboot) and a MachineHealthCheck that names it")
		tmpl := &capm3v1beta1.Metal3RemediationTemplate{ObjectMeta: metav1.ObjectMeta{Name: s.name, Namespace: scenarios.MachineAPINamespace},
			Spec: capm3v1beta1.Metal3RemediationTemplateSpec{Template: capm3v1beta1.Metal3RemediationTemplateResource{
				Spec: capm3v1beta1.Metal3RemediationSpec{Strategy: &capm3v1beta1.RemediationStrategy{
					Type: capm3v1beta1.RebootRemediationStrategy, RetryLimit: retryLimit, Timeout: &metav1.Duration{Duration: hc.retryTimeout}}}}}}
		Expect(s.spoke.Create(ctx, tmpl)).To(Succeed())
		mhc.Spec.RemediationTemplate = &corev1.ObjectReference{APIVersion: capm3v1beta1.GroupVersion.String(),
			Kind: "Metal3RemediationTemplate", Name: tmpl.Name, Namespace: tmpl.Namespace}
	}
	Expect(s.spoke.Create(ctx, mhc)).To(Succeed())
}

func (s *machineSetSide) deleteHealthCheck(ctx context.Context) {
	key := client.ObjectKey{Namespace: scenarios.MachineAPINamespace, Name: s.name}
	for _, obj := range []client.Object{&machinev1beta1.MachineHealthCheck{}, &capm3v1beta1.Metal3RemediationTemplate{}} {
		obj.SetName(key.Name)
		obj.SetNamespace(key.Namespace)
		Expect(client.IgnoreNotFound(s.spoke.Delete(ctx, obj))).To(Succeed())
	}
}

func (s *machineSetSide) healthCounts(ctx context.Context, g Gomega) (types.UID, healthCounts) {
	mhc := &machinev1beta1.MachineHealthCheck{}
	g.Expect(s.spoke.Get(ctx, client.ObjectKey{Namespace: scenarios.MachineAPINamespace, Name: s.name}, mhc)).To(Succeed())
	return mhc.UID, healthCounts{expected: ptr.Deref(mhc.Status.ExpectedMachines, 0), healthy: ptr.Deref(mhc.Status.CurrentHealthy, 0),
		allowed: int(mhc.Status.RemediationsAllowed)}
}

// requested: the Metal3Remediation MAO creates for the Machine, or its
// external-remediation annotation (and what the actuator keeps while it
// power-cycles the host).
func (s *machineSetSide) requested(ctx context.Context, g Gomega, w worker) bool {
	if s.strategy == strategyAnnotation {
		m := &machinev1beta1.Machine{}
		g.Expect(s.spoke.Get(ctx, client.ObjectKey{Namespace: scenarios.MachineAPINamespace, Name: w.Name}, m)).To(Succeed())
		_, asked := m.Annotations[mapi.ExternalRemediationAnnotation]
		_, off := m.Annotations[mapi.PoweredOffForRemediationAnnotation]
		return asked || off
	}
	err := s.spoke.Get(ctx, client.ObjectKey{Namespace: scenarios.MachineAPINamespace, Name: w.Name}, &capm3v1beta1.Metal3Remediation{})
	if apierrors.IsNotFound(err) {
		return false
	}
	g.Expect(err).NotTo(HaveOccurred())
	return true
}

// host is the BareMetalHost the Machine names (MAPI's host annotation).
func (s *machineSetSide) host(ctx context.Context, g Gomega, w worker) *bmov1alpha1.BareMetalHost {
	m := &machinev1beta1.Machine{}
	g.Expect(s.spoke.Get(ctx, client.ObjectKey{Namespace: scenarios.MachineAPINamespace, Name: w.Name}, m)).To(Succeed())
	ref := m.Annotations[mapi.HostAnnotation]
	ns, name, ok := strings.Cut(ref, "/")
	g.Expect(ok).To(BeTrue(), "Machine %s host annotation %q", w.Name, ref)
	bmh := &bmov1alpha1.BareMetalHost{}
	g.Expect(s.spoke.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, bmh)).To(Succeed())
	return bmh
}

func (s *machineSetSide) hostNamed(ctx context.Context, g Gomega, name string) *bmov1alpha1.BareMetalHost {
	bmh := &bmov1alpha1.BareMetalHost{}
	g.Expect(s.spoke.Get(ctx, client.ObjectKey{Namespace: scenarios.MachineAPINamespace, Name: name}, bmh)).To(Succeed())
	return bmh
}

// markedUnhealthy: OpenShift's Metal3Remediation marks the host with
// the v1beta1 key, capi.metal3.io/unhealthy.
func (s *machineSetSide) markedUnhealthy(host *bmov1alpha1.BareMetalHost) bool {
	_, ok := host.Annotations[capm3v1beta1.UnhealthyAnnotation]
	return ok
}

func (s *machineSetSide) liveMachines(ctx context.Context, g Gomega) []worker {
	list := &machinev1beta1.MachineList{}
	g.Expect(s.spoke.List(ctx, list, client.InNamespace(scenarios.MachineAPINamespace),
		client.MatchingLabels(s.selector()))).To(Succeed())
	var out []worker
	for _, m := range list.Items {
		if !m.DeletionTimestamp.IsZero() {
			continue
		}
		w := worker{Machine: m.UID, Name: m.Name}
		if ptr.Deref(m.Status.Phase, "") == machinev1beta1.PhaseRunning && m.Status.NodeRef != nil {
			w.Node = m.Status.NodeRef.Name
		}
		out = append(out, w)
	}
	return out
}

func (s *machineSetSide) forgetNode(name string) { s.workers = withoutNode(s.workers, name) }

func (s *machineSetSide) recordNode(ctx context.Context, run *scenarios.Run, name string) {
	s.workers = recordJoinedNode(ctx, run, s.base.WorkloadConfig, s.workers, name)
}

func (s *machineSetSide) expectMachineHealthy(ctx context.Context, g Gomega, w worker) {
	m := &machinev1beta1.Machine{}
	g.Expect(s.spoke.Get(ctx, client.ObjectKey{Namespace: scenarios.MachineAPINamespace, Name: w.Name}, m)).To(Succeed())
	g.Expect(m.Status.Phase).To(HaveValue(Equal(machinev1beta1.PhaseRunning)), "Machine %s", w.Name)
}

func (s *machineSetSide) requestState(ctx context.Context, g Gomega, w worker) string {
	rem := &capm3v1beta1.Metal3Remediation{}
	return requestStateOf(g, rem, s.spoke.Get(ctx, client.ObjectKey{Namespace: scenarios.MachineAPINamespace, Name: w.Name}, rem))
}

func (s *machineSetSide) rebootHost(ctx context.Context, w worker) {
	hardReboot(ctx, s.spoke, client.ObjectKeyFromObject(s.host(ctx, Default, w)))
}

func (s *machineSetSide) deleteMachine(ctx context.Context, g Gomega, w worker) {
	m := &machinev1beta1.Machine{ObjectMeta: metav1.ObjectMeta{Namespace: scenarios.MachineAPINamespace, Name: w.Name}}
	g.Expect(client.IgnoreNotFound(s.spoke.Delete(ctx, m))).To(Succeed())
}

func (s *machineSetSide) finish(ctx context.Context, failed bool, why string) *results.Observation {
	hosts := scenarios.HostList{Client: s.spoke, Namespace: scenarios.MachineAPINamespace, Labels: s.pool.labels()}
	if s.pool.ztpDay2 {
		hosts.Labels, hosts.Name = nil, s.pool.ztpHost()
	}
	in := scenarios.FinishInput{Failed: failed, Err: why, Workload: s.spoke, WorkloadConfig: s.base.WorkloadConfig,
		NodeNames: nodeNames(s.workers),
		// No PoolHosts: only the remediated host's BMC acts during a run,
		// so its power timeline is compared in order, as one line.
		AgentNamespace: s.base.Namespace,
		HostLists:      []scenarios.HostList{hosts}}
	return s.run.Finish(ctx, s.in.Lab, in)
}

// The health checks and remediations of both flows, alike.
const (
	// unreachableAfter: a Node whose kubelet stopped reporting (Ready
	// Unknown, as the hung server's) is unhealthy after 10 s.
	unreachableAfter = 10 * time.Second
	// notReadyAfter: a Node its kubelet reports NotReady (Ready False, as a
	// Node registering again after the power cycle is for a while) only
	// after 300 s, OpenShift's documented example; 10 s remediated a
	// freshly registered Node a second time on a slow run.
	notReadyAfter      = 300 * time.Second
	nodeStartupTimeout = 10 * time.Minute
	retryLimit         = 1
)

// healthCheck is what a sub-case's MachineHealthCheck and remediation
// template say, alike on both flows.
type healthCheck struct {
	// maxUnhealthy is MAPI's maxUnhealthy and CAPI's
	// remediation.triggerIf.unhealthyLessThanOrEqualTo; nil: no limit
	// (MAPI's "100%", nothing under CAPI).
	maxUnhealthy *intstr.IntOrString
	// retryTimeout is the template's timeout of each reboot.
	retryTimeout time.Duration
	// ownerRemediates: no remediation template (and no MAPI strategy):
	// the health check leaves the Machine to its owner (NameOwnerless).
	ownerRemediates bool
}

// rebootHealthCheck: no limit, and reboots that never time out in a run
// (the Node is back within a minute).
var rebootHealthCheck = healthCheck{retryTimeout: 10 * time.Minute}

// addZTPWorker adds the ztpDay2 set's worker through ZTP day 2 and labels
// its Machine, which the BMAC writes without an owner, for the health
// check, as an admin does to select it alone.
func (s *machineSetSide) addZTPWorker(ctx context.Context) {
	site := s.base.ZTP
	Expect(site).NotTo(BeNil(), "the MAPI day-1 cluster is a ZTP site")
	m := scenarios.AddZTPDay2Worker(ctx, scenarios.ZTPDay2WorkerInput{Hosts: s.in.Hosts, Hub: s.in.Lab.Client(), Spoke: s.spoke,
		Site: *site, Name: s.pool.ztpHost(), Interval: interval(s.in, "wait-machines-running")})
	Expect(metav1.GetControllerOf(m)).To(BeNil(), "the ZTP day-2 Machine %s has no controller owner", m.Name)
	By("labelling the ZTP day-2 Machine " + m.Name + " for the health check")
	p := client.MergeFrom(m.DeepCopy())
	if m.Labels == nil {
		m.Labels = map[string]string{}
	}
	m.Labels[healthCheckLabel] = s.pool.name
	Expect(s.spoke.Patch(ctx, m, p)).To(Succeed())
}

// ownerAsked: MAO's internal remediation records SkippedNoController on
// a Machine without a controller owner, MachineDeleted on one it deleted
// (machinehealthcheck_controller.go internalRemediation).
func (s *machineSetSide) ownerAsked(ctx context.Context, g Gomega, w worker) bool {
	m := &machinev1beta1.Machine{}
	err := s.spoke.Get(ctx, client.ObjectKey{Namespace: scenarios.MachineAPINamespace, Name: w.Name}, m)
	if apierrors.IsNotFound(err) || (err == nil && (m.UID != w.Machine || !m.DeletionTimestamp.IsZero())) {
		return true
	}
	g.Expect(err).NotTo(HaveOccurred())
	events := &corev1.EventList{}
	g.Expect(s.spoke.List(ctx, events, client.InNamespace(scenarios.MachineAPINamespace),
		client.MatchingFields{"involvedObject.uid": string(w.Machine)})).To(Succeed())
	for _, e := range events.Items {
		if e.Reason == "SkippedNoController" || e.Reason == "MachineDeleted" {
			return true
		}
	}
	return false
}

func (s *machineSetSide) machineExists(ctx context.Context, g Gomega, w worker) bool {
	m := &machinev1beta1.Machine{}
	err := s.spoke.Get(ctx, client.ObjectKey{Namespace: scenarios.MachineAPINamespace, Name: w.Name}, m)
	if apierrors.IsNotFound(err) {
		return false
	}
	g.Expect(err).NotTo(HaveOccurred())
	return m.UID == w.Machine
}
