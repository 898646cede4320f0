package replacement

import (
	"context"
	"fmt"
	"sort"

	bmov1alpha1 "github.com/metal3-io/baremetal-operator/apis/metal3.io/v1alpha1"
	capm3v1beta2 "github.com/metal3-io/cluster-api-provider-metal3/api/v1beta2"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/cluster-api/util/conditions"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/paritylab/paritylab/framework"
	"github.com/paritylab/paritylab/results"
	"github.com/paritylab/paritylab/scenarios"
)

var (
	capiHealthChecks       = clusterv1.GroupVersion.WithResource("machinehealthchecks")
	capiMetal3Remediations = capm3v1beta2.GroupVersion.WithResource("metal3remediations")
)

// machineDeploymentSide is the CAPI flow: a MachineDeployment on the hub
// over a pool of hosts in the cluster's namespace, and a
// MachineHealthCheck there.
type machineDeploymentSide struct {
	in      scenarios.Input
	base    *scenarios.Cluster
	hub     client.Client
	pool    pool
	name    string
	run     *scenarios.Run
	workers []worker
	created bool
}

func newMachineDeploymentSide(in scenarios.Input, base *scenarios.Cluster, p pool) *machineDeploymentSide {
	return &machineDeploymentSide{in: in, base: base, hub: in.Lab.Client(), pool: p, name: base.Site.Name + "-" + p.name}
}

func (s *machineDeploymentSide) cluster() *scenarios.Cluster { return s.base }

// restoresWithUpdate: CAPM3 keeps the Node.
func (s *machineDeploymentSide) restoresWithUpdate() bool { return false }

func (s *machineDeploymentSide) workload() client.Client { return s.base.Workload }

// selector selects the set's Machines: the MachineDeployment's, or the
// cluster's control-plane Machines.
func (s *machineDeploymentSide) selector() map[string]string {
	if s.pool.controlPlane {
		return map[string]string{clusterv1.MachineControlPlaneLabel: "", clusterv1.ClusterNameLabel: s.base.Site.Name}
	}
	return map[string]string{clusterv1.MachineDeploymentNameLabel: s.name}
}

func (s *machineDeploymentSide) ensureWorkers(ctx context.Context) []worker {
	if !s.created && !s.pool.controlPlane {
		By(fmt.Sprintf("adding the %s pool's hosts to the cluster's namespace and creating a MachineDeployment of %d replica(s)", s.pool.name, s.pool.replicas))
		var claims []framework.HostClaim
		for _, h := range s.pool.hostNames() {
			claims = append(claims, framework.HostClaim{Namespace: s.base.Namespace, Name: h, Labels: s.pool.labels()})
		}
		_, err := s.in.Hosts.Claim(ctx, claims...)
		Expect(err).NotTo(HaveOccurred())
		tmpl := s.base.Site.WorkerTemplate(s.name, s.pool.labels())
		Expect(s.hub.Create(ctx, tmpl)).To(Succeed())
		md := s.base.Site.MachineDeployment(s.name, int32(s.pool.replicas))
		md.Spec.Template.Spec.InfrastructureRef.Name = tmpl.Name
		if s.pool.ztpDay2 {
			// The label the MAPI flow's owner-less Machine gets for its
			// health check, so that both flows' Machines carry it.
			if md.Spec.Template.Labels == nil {
				md.Spec.Template.Labels = map[string]string{}
			}
			md.Spec.Template.Labels[healthCheckLabel] = s.pool.name
		}
		Expect(s.hub.Create(ctx, md)).To(Succeed())
		s.created = true
	}
	By("waiting for the set's Machines Running with Ready Nodes")
	var ws []worker
	iv := interval(s.in, "wait-machines-running")
	Eventually(func(g Gomega) {
		ws = nil
		for _, m := range s.machines(ctx, g) {
			g.Expect(m.Status.Phase).To(Equal(string(clusterv1.MachinePhaseRunning)), "Machine %s", m.Name)
			g.Expect(m.Status.NodeRef.IsDefined()).To(BeTrue(), "Machine %s nodeRef", m.Name)
			scenarios.ExpectNodeReady(ctx, g, s.base.Workload, m.Status.NodeRef.Name)
			ws = append(ws, worker{Machine: m.UID, Name: m.Name, Node: m.Status.NodeRef.Name})
		}
	}).WithContext(ctx).WithTimeout(iv.Timeout).WithPolling(iv.Polling).Should(Succeed())
	return ws
}

// machines are the deployment's Machines that are not being deleted, as
// many as its replicas.
func (s *machineDeploymentSide) machines(ctx context.Context, g Gomega) []clusterv1.Machine {
	list := &clusterv1.MachineList{}
	g.Expect(s.hub.List(ctx, list, client.InNamespace(s.base.Namespace),
		client.MatchingLabels(s.selector()))).To(Succeed())
	var live []clusterv1.Machine
	for _, m := range list.Items {
		if m.DeletionTimestamp.IsZero() {
			live = append(live, m)
		}
	}
	g.Expect(live).To(HaveLen(s.pool.replicas), "Machines of %s", s.name)
	sort.Slice(live, func(i, j int) bool { return live[i].Name < live[j].Name })
	return live
}

func (s *machineDeploymentSide) machineUID(ctx context.Context, g Gomega, w worker) types.UID {
	return uidOrReplacement(s.machines(ctx, g), w.Name)
}

func (s *machineDeploymentSide) record(ctx context.Context, run *scenarios.Run, ws []worker) {
	ns := s.base.Namespace
	s.run, s.workers = run, ws
	watches := []framework.Watch{
		{Resource: scenarios.CAPIMachines, Namespace: ns, Role: "machine", LabelSelector: labels.SelectorFromSet(s.selector()).String()},
		{Resource: scenarios.BareMetalHosts, Namespace: ns, Role: "host", Interchangeable: true, LabelSelector: s.pool.selector()},
		{Resource: capiHealthChecks, Namespace: ns, Role: "health-check", FieldSelector: "metadata.name=" + s.name},
	}
	watches = append(watches, remediations(capiMetal3Remediations, ns, ws)...)
	Expect(run.Record(ctx, s.in.Lab.Hub.GetRESTConfig(), []string{ns}, watches...)).To(Succeed())
	Expect(run.Record(ctx, s.base.WorkloadConfig, nil, nodeIdentities(ws)...)).To(Succeed())
	run.SetCluster(ns)
}

// createHealthCheck: the MAPI side's checks, with CAPM3's Reboot
// template (none when the owner remediates).
func (s *machineDeploymentSide) createHealthCheck(ctx context.Context, hc healthCheck) {
	var ref clusterv1.MachineHealthCheckRemediationTemplateReference
	if hc.ownerRemediates {
		By("creating a MachineHealthCheck without a remediation template")
	} else {
		By("creating a Metal3RemediationTemplate (Reboot) and a MachineHealthCheck that names it")
		tmpl := &capm3v1beta2.Metal3RemediationTemplate{ObjectMeta: metav1.ObjectMeta{Name: s.name, Namespace: s.base.Namespace},
			Spec: capm3v1beta2.Metal3RemediationTemplateSpec{Template: capm3v1beta2.Metal3RemediationTemplateResource{
				Spec: capm3v1beta2.Metal3RemediationSpec{Strategy: &capm3v1beta2.RemediationStrategy{
					Type: capm3v1beta2.RebootRemediationStrategy, RetryLimit: retryLimit, TimeoutSeconds: int32(hc.retryTimeout.Seconds())}}}}}
		Expect(s.hub.Create(ctx, tmpl)).To(Succeed())
		ref = clusterv1.MachineHealthCheckRemediationTemplateReference{APIVersion: capm3v1beta2.GroupVersion.String(), Kind: "Metal3RemediationTemplate", Name: tmpl.Name}
	}
	unknown, notReady := ptr.To(int32(unreachableAfter.Seconds())), ptr.To(int32(notReadyAfter.Seconds()))
	mhc := &clusterv1.MachineHealthCheck{ObjectMeta: metav1.ObjectMeta{Name: s.name, Namespace: s.base.Namespace},
		Spec: clusterv1.MachineHealthCheckSpec{
			ClusterName: s.base.Site.Name,
			Selector:    metav1.LabelSelector{MatchLabels: s.selector()},
			Checks: clusterv1.MachineHealthCheckChecks{
				NodeStartupTimeoutSeconds: ptr.To(int32(nodeStartupTimeout.Seconds())),
				UnhealthyNodeConditions: []clusterv1.UnhealthyNodeCondition{
					{Type: corev1.NodeReady, Status: corev1.ConditionUnknown, TimeoutSeconds: unknown},
					{Type: corev1.NodeReady, Status: corev1.ConditionFalse, TimeoutSeconds: notReady},
				},
			},
			Remediation: clusterv1.MachineHealthCheckRemediation{TemplateRef: ref},
		}}
	if hc.maxUnhealthy != nil {
		mhc.Spec.Remediation.TriggerIf.UnhealthyLessThanOrEqualTo = hc.maxUnhealthy
	}
	Expect(s.hub.Create(ctx, mhc)).To(Succeed())
}

func (s *machineDeploymentSide) deleteHealthCheck(ctx context.Context) {
	for _, obj := range []client.Object{&clusterv1.MachineHealthCheck{}, &capm3v1beta2.Metal3RemediationTemplate{}} {
		obj.SetName(s.name)
		obj.SetNamespace(s.base.Namespace)
		Expect(client.IgnoreNotFound(s.hub.Delete(ctx, obj))).To(Succeed())
	}
}

func (s *machineDeploymentSide) healthCounts(ctx context.Context, g Gomega) (types.UID, healthCounts) {
	mhc := &clusterv1.MachineHealthCheck{}
	g.Expect(s.hub.Get(ctx, client.ObjectKey{Namespace: s.base.Namespace, Name: s.name}, mhc)).To(Succeed())
	st := mhc.Status
	return mhc.UID, healthCounts{expected: int(ptr.Deref(st.ExpectedMachines, 0)), healthy: int(ptr.Deref(st.CurrentHealthy, 0)),
		allowed: int(ptr.Deref(st.RemediationsAllowed, 0))}
}

// requested: the Metal3Remediation the MachineHealthCheck makes from the
// template, named after the Machine.
func (s *machineDeploymentSide) requested(ctx context.Context, g Gomega, w worker) bool {
	err := s.hub.Get(ctx, client.ObjectKey{Namespace: s.base.Namespace, Name: w.Name}, &capm3v1beta2.Metal3Remediation{})
	if apierrors.IsNotFound(err) {
		return false
	}
	g.Expect(err).NotTo(HaveOccurred())
	return true
}

// host is the BareMetalHost the Metal3Machine consumes (its providerID
// metal3://<namespace>/<host>/<metal3machine>).
func (s *machineDeploymentSide) host(ctx context.Context, g Gomega, w worker) *bmov1alpha1.BareMetalHost {
	list := &bmov1alpha1.BareMetalHostList{}
	g.Expect(s.hub.List(ctx, list, client.InNamespace(s.base.Namespace))).To(Succeed())
	m := &clusterv1.Machine{}
	g.Expect(s.hub.Get(ctx, client.ObjectKey{Namespace: s.base.Namespace, Name: w.Name}, m)).To(Succeed())
	for i := range list.Items {
		if ref := list.Items[i].Spec.ConsumerRef; ref != nil && ref.Kind == "Metal3Machine" && ref.Name == m.Spec.InfrastructureRef.Name {
			return &list.Items[i]
		}
	}
	g.Expect(false).To(BeTrue(), "no BareMetalHost consumed by Metal3Machine %s", m.Spec.InfrastructureRef.Name)
	return nil
}

func (s *machineDeploymentSide) hostNamed(ctx context.Context, g Gomega, name string) *bmov1alpha1.BareMetalHost {
	bmh := &bmov1alpha1.BareMetalHost{}
	g.Expect(s.hub.Get(ctx, client.ObjectKey{Namespace: s.base.Namespace, Name: name}, bmh)).To(Succeed())
	return bmh
}

// markedUnhealthy: CAPM3 marks the host with its v1beta2 key,
// capm3.metal3.io/unhealthy.
func (s *machineDeploymentSide) markedUnhealthy(host *bmov1alpha1.BareMetalHost) bool {
	_, ok := host.Annotations[capm3v1beta2.UnhealthyAnnotation]
	return ok
}

func (s *machineDeploymentSide) liveMachines(ctx context.Context, g Gomega) []worker {
	list := &clusterv1.MachineList{}
	g.Expect(s.hub.List(ctx, list, client.InNamespace(s.base.Namespace),
		client.MatchingLabels(s.selector()))).To(Succeed())
	var out []worker
	for _, m := range list.Items {
		if !m.DeletionTimestamp.IsZero() {
			continue
		}
		w := worker{Machine: m.UID, Name: m.Name}
		if m.Status.Phase == string(clusterv1.MachinePhaseRunning) && m.Status.NodeRef.IsDefined() {
			w.Node = m.Status.NodeRef.Name
		}
		out = append(out, w)
	}
	return out
}

func (s *machineDeploymentSide) forgetNode(name string) { s.workers = withoutNode(s.workers, name) }

func (s *machineDeploymentSide) recordNode(ctx context.Context, run *scenarios.Run, name string) {
	s.workers = recordJoinedNode(ctx, run, s.base.WorkloadConfig, s.workers, name)
}

func (s *machineDeploymentSide) expectMachineHealthy(ctx context.Context, g Gomega, w worker) {
	m := &clusterv1.Machine{}
	g.Expect(s.hub.Get(ctx, client.ObjectKey{Namespace: s.base.Namespace, Name: w.Name}, m)).To(Succeed())
	for _, t := range []string{clusterv1.ReadyCondition, clusterv1.MachineHealthCheckSucceededCondition} {
		g.Expect(conditions.IsTrue(m, t)).To(BeTrue(), "Machine %s %s", w.Name, t)
	}
}

func (s *machineDeploymentSide) requestState(ctx context.Context, g Gomega, w worker) string {
	rem := &capm3v1beta2.Metal3Remediation{}
	return requestStateOf(g, rem, s.hub.Get(ctx, client.ObjectKey{Namespace: s.base.Namespace, Name: w.Name}, rem))
}

func (s *machineDeploymentSide) rebootHost(ctx context.Context, w worker) {
	hardReboot(ctx, s.hub, client.ObjectKeyFromObject(s.host(ctx, Default, w)))
}

func (s *machineDeploymentSide) deleteMachine(ctx context.Context, g Gomega, w worker) {
	m := &clusterv1.Machine{ObjectMeta: metav1.ObjectMeta{Namespace: s.base.Namespace, Name: w.Name}}
	g.Expect(client.IgnoreNotFound(s.hub.Delete(ctx, m))).To(Succeed())
}

func (s *machineDeploymentSide) finish(ctx context.Context, failed bool, why string) *results.Observation {
	in := scenarios.FinishInput{Failed: failed, Err: why, Workload: s.base.Workload, WorkloadConfig: s.base.WorkloadConfig,
		NodeNames: nodeNames(s.workers),
		// No PoolHosts: only the remediated host's BMC acts during a run,
		// so its power timeline is compared in order, as one line.
		AgentNamespace: s.base.Namespace,
		HostLists:      []scenarios.HostList{{Client: s.hub, Namespace: s.base.Namespace, Labels: s.pool.labels()}}}
	return s.run.Finish(ctx, s.in.Lab, in)
}

// ownerAsked: CAPI's health check without a remediation template sets
// OwnerRemediated False on the Machine, which its MachineSet acts on.
func (s *machineDeploymentSide) ownerAsked(ctx context.Context, g Gomega, w worker) bool {
	m := &clusterv1.Machine{}
	err := s.hub.Get(ctx, client.ObjectKey{Namespace: s.base.Namespace, Name: w.Name}, m)
	if apierrors.IsNotFound(err) {
		return true
	}
	g.Expect(err).NotTo(HaveOccurred())
	return m.UID != w.Machine || !m.DeletionTimestamp.IsZero() || conditions.IsFalse(m, clusterv1.MachineOwnerRemediatedCondition)
}

func (s *machineDeploymentSide) machineExists(ctx context.Context, g Gomega, w worker) bool {
	m := &clusterv1.Machine{}
	err := s.hub.Get(ctx, client.ObjectKey{Namespace: s.base.Namespace, Name: w.Name}, m)
	if apierrors.IsNotFound(err) {
		return false
	}
	g.Expect(err).NotTo(HaveOccurred())
	return m.UID == w.Machine
}
