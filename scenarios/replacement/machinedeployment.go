package replacement

import (
	"context"

	bmov1alpha1 "github.com/metal3-io/baremetal-operator/apis/metal3.io/v1alpha1"
	capm3v1beta2 "github.com/metal3-io/cluster-api-provider-metal3/api/v1beta2"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
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
// over hosts in the cluster's namespace, and a MachineHealthCheck there.
type machineDeploymentSide struct {
	in      scenarios.Input
	base    *scenarios.Cluster
	hub     client.Client
	name    string
	run     *scenarios.Run
	worker  worker
	created bool
}

func newMachineDeploymentSide(in scenarios.Input, base *scenarios.Cluster) *machineDeploymentSide {
	return &machineDeploymentSide{in: in, base: base, hub: in.Lab.Client(), name: base.Site.Name + "-" + setSuffix}
}

func (s *machineDeploymentSide) workload() client.Client { return s.base.Workload }

func (s *machineDeploymentSide) ensureWorker(ctx context.Context) worker {
	if !s.created {
		By("adding the pool's hosts to the cluster's namespace and creating a MachineDeployment of 1 replica")
		var claims []framework.HostClaim
		for _, h := range poolHostNames() {
			claims = append(claims, framework.HostClaim{Namespace: s.base.Namespace, Name: h, Labels: poolLabels()})
		}
		_, err := s.in.Hosts.Claim(ctx, claims...)
		Expect(err).NotTo(HaveOccurred())
		tmpl := s.base.Site.WorkerTemplate(s.name, poolLabels())
		Expect(s.hub.Create(ctx, tmpl)).To(Succeed())
		md := s.base.Site.MachineDeployment(s.name, 1)
		md.Spec.Template.Spec.InfrastructureRef.Name = tmpl.Name
		Expect(s.hub.Create(ctx, md)).To(Succeed())
		s.created = true
	}
	By("waiting for the MachineDeployment's Machine Running with a Ready Node")
	var w worker
	iv := interval(s.in, "wait-machines-running")
	Eventually(func(g Gomega) {
		m := s.machine(ctx, g)
		g.Expect(m.Status.Phase).To(Equal(string(clusterv1.MachinePhaseRunning)), "Machine %s", m.Name)
		g.Expect(m.Status.NodeRef.IsDefined()).To(BeTrue(), "Machine %s nodeRef", m.Name)
		scenarios.ExpectNodeReady(ctx, g, s.base.Workload, m.Status.NodeRef.Name)
		w = worker{Machine: m.UID, Name: m.Name, Node: m.Status.NodeRef.Name}
	}).WithContext(ctx).WithTimeout(iv.Timeout).WithPolling(iv.Polling).Should(Succeed())
	return w
}

func (s *machineDeploymentSide) machine(ctx context.Context, g Gomega) *clusterv1.Machine {
	list := &clusterv1.MachineList{}
	g.Expect(s.hub.List(ctx, list, client.InNamespace(s.base.Namespace),
		client.MatchingLabels{clusterv1.MachineDeploymentNameLabel: s.name})).To(Succeed())
	var live []clusterv1.Machine
	for _, m := range list.Items {
		if m.DeletionTimestamp.IsZero() {
			live = append(live, m)
		}
	}
	g.Expect(live).To(HaveLen(1), "Machines of %s", s.name)
	return &live[0]
}

func (s *machineDeploymentSide) machineUID(ctx context.Context, g Gomega, _ worker) types.UID {
	return s.machine(ctx, g).UID
}

func (s *machineDeploymentSide) record(ctx context.Context, run *scenarios.Run, w worker) {
	ns := s.base.Namespace
	s.run, s.worker = run, w
	Expect(run.Record(ctx, s.in.Lab.Hub.GetRESTConfig(), []string{ns},
		framework.Watch{Resource: scenarios.CAPIMachines, Namespace: ns, Role: "machine", LabelSelector: clusterv1.MachineDeploymentNameLabel + "=" + s.name},
		framework.Watch{Resource: scenarios.BareMetalHosts, Namespace: ns, Role: "host", Interchangeable: true, LabelSelector: poolSelector()},
		framework.Watch{Resource: capiHealthChecks, Namespace: ns, Role: "health-check"},
		framework.Watch{Resource: capiMetal3Remediations, Namespace: ns, Role: "remediation"},
	)).To(Succeed())
	Expect(run.Record(ctx, s.base.WorkloadConfig, nil, nodeIdentity(w))).To(Succeed())
	run.SetCluster(ns)
}

// createHealthCheck: the MAPI side's checks, with CAPM3's Reboot
// template.
func (s *machineDeploymentSide) createHealthCheck(ctx context.Context) {
	By("creating a Metal3RemediationTemplate (Reboot) and a MachineHealthCheck that names it")
	tmpl := &capm3v1beta2.Metal3RemediationTemplate{ObjectMeta: metav1.ObjectMeta{Name: s.name, Namespace: s.base.Namespace},
		Spec: capm3v1beta2.Metal3RemediationTemplateSpec{Template: capm3v1beta2.Metal3RemediationTemplateResource{
			Spec: capm3v1beta2.Metal3RemediationSpec{Strategy: &capm3v1beta2.RemediationStrategy{
				Type: capm3v1beta2.RebootRemediationStrategy, RetryLimit: retryLimit, TimeoutSeconds: int32(retryTimeout.Seconds())}}}}}
	Expect(s.hub.Create(ctx, tmpl)).To(Succeed())
	unknown, notReady := ptr.To(int32(unreachableAfter.Seconds())), ptr.To(int32(notReadyAfter.Seconds()))
	mhc := &clusterv1.MachineHealthCheck{ObjectMeta: metav1.ObjectMeta{Name: s.name, Namespace: s.base.Namespace},
		Spec: clusterv1.MachineHealthCheckSpec{
			ClusterName: s.base.Site.Name,
			Selector:    metav1.LabelSelector{MatchLabels: map[string]string{clusterv1.MachineDeploymentNameLabel: s.name}},
			Checks: clusterv1.MachineHealthCheckChecks{
				NodeStartupTimeoutSeconds: ptr.To(int32(nodeStartupTimeout.Seconds())),
				UnhealthyNodeConditions: []clusterv1.UnhealthyNodeCondition{
					{Type: corev1.NodeReady, Status: corev1.ConditionUnknown, TimeoutSeconds: unknown},
					{Type: corev1.NodeReady, Status: corev1.ConditionFalse, TimeoutSeconds: notReady},
				},
			},
			Remediation: clusterv1.MachineHealthCheckRemediation{TemplateRef: clusterv1.MachineHealthCheckRemediationTemplateReference{
				APIVersion: capm3v1beta2.GroupVersion.String(), Kind: "Metal3RemediationTemplate", Name: tmpl.Name}},
		}}
	Expect(s.hub.Create(ctx, mhc)).To(Succeed())
}

func (s *machineDeploymentSide) deleteHealthCheck(ctx context.Context) {
	for _, obj := range []client.Object{&clusterv1.MachineHealthCheck{}, &capm3v1beta2.Metal3RemediationTemplate{}} {
		obj.SetName(s.name)
		obj.SetNamespace(s.base.Namespace)
		Expect(client.IgnoreNotFound(s.hub.Delete(ctx, obj))).To(Succeed())
	}
}

func (s *machineDeploymentSide) healthCheck(ctx context.Context, g Gomega) (types.UID, healthCounts) {
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

func (s *machineDeploymentSide) finish(ctx context.Context, failed bool, why string) *results.Observation {
	in := scenarios.FinishInput{Failed: failed, Err: why, Workload: s.base.Workload, WorkloadConfig: s.base.WorkloadConfig,
		NodeNames: []string{s.worker.Node},
		// No PoolHosts: only the remediated host's BMC acts during a run,
		// so its power timeline is compared in order, as one line.
		AgentNamespace: s.base.Namespace,
		HostLists:      []scenarios.HostList{{Client: s.hub, Namespace: s.base.Namespace, Labels: poolLabels()}}}
	return s.run.Finish(ctx, s.in.Lab, in)
}
