package day2scale

import (
	"context"
	"fmt"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/paritylab/paritylab/framework"
	"github.com/paritylab/paritylab/results"
	"github.com/paritylab/paritylab/scenarios"
)

// machineDeploymentSide scales workers with a CAPI MachineDeployment on
// the hub, over BareMetalHosts in the cluster's hub namespace that CAPM3
// claims, and adds a worker by scaling it once more.
type machineDeploymentSide struct {
	in   scenarios.Input
	run  *scenarios.Run
	base *scenarios.Cluster
	hub  client.Client
	name string
}

func newMachineDeploymentSide(ctx context.Context, in scenarios.Input, run *scenarios.Run, base *scenarios.Cluster) *machineDeploymentSide {
	ns := base.Namespace
	Expect(run.Record(ctx, in.Lab.Hub.GetRESTConfig(), []string{ns},
		framework.Watch{Resource: scenarios.CAPIMachines, Namespace: ns, Role: "machine"},
		framework.Watch{Resource: scenarios.CAPIMachineSets, Namespace: ns, Role: "machine-set"},
		framework.Watch{Resource: scenarios.BareMetalHosts, Namespace: ns, Role: "host", Interchangeable: true}, // see newMachineSetSide
		framework.Watch{Resource: scenarios.CAPIMachineDeploys, Namespace: ns},
		framework.Watch{Resource: scenarios.Metal3Machines, Namespace: ns},
	)).To(Succeed())
	Expect(run.Record(ctx, base.WorkloadConfig, nil, scenarios.NodeIdentities)).To(Succeed())
	return &machineDeploymentSide{in: in, run: run, base: base, hub: in.Lab.Client(), name: base.Site.Name + "-scale"}
}

// create adds the pool's hosts as workers' hosts and a MachineDeployment
// of 0 replicas over the site's worker templates.
func (s *machineDeploymentSide) create(ctx context.Context) {
	By("adding the pool's hosts to the cluster's namespace, labelled for the worker template")
	var claims []framework.HostClaim
	for i := range scalePoolHosts {
		claims = append(claims, framework.HostClaim{Namespace: s.base.Namespace, Name: poolHostName(i),
			Labels: map[string]string{scenarios.HostRoleLabel: scenarios.RoleWorker}})
	}
	_, err := s.in.Hosts.Claim(ctx, claims...)
	Expect(err).NotTo(HaveOccurred())
	By("creating a MachineDeployment of 0 replicas")
	Expect(s.hub.Create(ctx, s.base.Site.MachineDeployment(s.name, 0))).To(Succeed())
}

func (s *machineDeploymentSide) patch(ctx context.Context, mutate func(*clusterv1.MachineDeployment)) {
	md := &clusterv1.MachineDeployment{}
	Expect(s.hub.Get(ctx, client.ObjectKey{Namespace: s.base.Namespace, Name: s.name}, md)).To(Succeed())
	p := client.MergeFrom(md.DeepCopy())
	mutate(md)
	Expect(s.hub.Patch(ctx, md, p)).To(Succeed())
}

func (s *machineDeploymentSide) scale(ctx context.Context, n int) {
	s.patch(ctx, func(md *clusterv1.MachineDeployment) { md.Spec.Replicas = ptr.To(int32(n)) })
}

func (s *machineDeploymentSide) setDeletionOrder(ctx context.Context, order string) {
	s.patch(ctx, func(md *clusterv1.MachineDeployment) {
		md.Spec.Deletion.Order = clusterv1.MachineSetDeletionOrder(order)
	})
	// The MachineDeployment propagates the order to its MachineSet in
	// place; a scale-down before that would use the old order.
	iv := interval(s.in, "wait-object")
	Eventually(func(g Gomega) {
		list := &clusterv1.MachineSetList{}
		g.Expect(s.hub.List(ctx, list, client.InNamespace(s.base.Namespace),
			client.MatchingLabels{clusterv1.MachineDeploymentNameLabel: s.name})).To(Succeed())
		g.Expect(list.Items).NotTo(BeEmpty())
		for _, ms := range list.Items {
			g.Expect(string(ms.Spec.Deletion.Order)).To(Equal(order), "MachineSet %s", ms.Name)
		}
	}).WithContext(ctx).WithTimeout(iv.Timeout).WithPolling(iv.Polling).Should(Succeed())
}

func (s *machineDeploymentSide) markForDeletion(ctx context.Context, name string) {
	m := &clusterv1.Machine{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: s.base.Namespace}}
	Expect(s.hub.Patch(ctx, m, client.RawPatch("application/merge-patch+json",
		[]byte(`{"metadata":{"annotations":{"`+clusterv1.DeleteMachineAnnotation+`":"true"}}}`)))).To(Succeed())
}

// waitRunning: exactly n Machines of the MachineDeployment, Running,
// linked by CAPI core to a Ready Node, none being deleted.
func (s *machineDeploymentSide) waitRunning(ctx context.Context, n int) []worker {
	By(fmt.Sprintf("waiting for %d Machines of %s Running with Ready nodes", n, s.name))
	iv := interval(s.in, "wait-machines-running")
	var out []worker
	Eventually(func(g Gomega) {
		list := &clusterv1.MachineList{}
		g.Expect(s.hub.List(ctx, list, client.InNamespace(s.base.Namespace),
			client.MatchingLabels{clusterv1.MachineDeploymentNameLabel: s.name})).To(Succeed())
		g.Expect(list.Items).To(HaveLen(n))
		out = out[:0]
		for _, m := range list.Items {
			g.Expect(m.DeletionTimestamp.IsZero()).To(BeTrue(), "Machine %s is being deleted", m.Name)
			g.Expect(m.Status.Phase).To(Equal(string(clusterv1.MachinePhaseRunning)), "Machine %s", m.Name)
			g.Expect(m.Status.NodeRef.IsDefined()).To(BeTrue(), "Machine %s nodeRef", m.Name)
			expectNodeReady(ctx, g, s.base.Workload, m.Status.NodeRef.Name)
			out = append(out, worker{Name: m.Name, UID: m.UID, Created: m.CreationTimestamp.Time})
		}
		scenarios.ExpectCAPIMachineSetsSettled(ctx, g, s.hub, s.base.Namespace, nil)
	}).WithContext(ctx).WithTimeout(iv.Timeout).WithPolling(iv.Polling).Should(Succeed())
	return out
}

// addWorker: under CAPI a worker joins a running cluster only through a
// MachineDeployment (or MachineSet) replica; like the MAPI flow's ZTP
// day-2 worker it comes with a new host, added before scaling. The
// milestone is the new Node Ready, as in the MAPI flow, and not its
// Machine Running: CAPM3 looks for the Node of a provisioned host every
// 30 s, so the Machine follows its Node by up to that long, a wait the
// MAPI flow's milestone does not contain.
func (s *machineDeploymentSide) addWorker(ctx context.Context, ready func()) {
	_, err := s.in.Hosts.Claim(ctx, framework.HostClaim{Namespace: s.base.Namespace, Name: day2HostName,
		Labels: map[string]string{scenarios.HostRoleLabel: scenarios.RoleWorker}})
	Expect(err).NotTo(HaveOccurred())
	before := s.nodeUIDs(ctx)
	s.scale(ctx, 2)
	By("waiting for the new worker's Node to be Ready")
	iv := interval(s.in, "wait-machines-running")
	Eventually(func(g Gomega) {
		g.Expect(newReadyNodes(ctx, g, s.base.Workload, before)).To(HaveLen(1), "one new Ready Node")
	}).WithContext(ctx).WithTimeout(iv.Timeout).WithPolling(iv.Polling).Should(Succeed())
	ready()
	s.waitRunning(ctx, 2)
}

// nodeUIDs are the workload cluster's Nodes now: a Node of a host taken
// again has the name of the one deleted with its Machine, not its UID.
func (s *machineDeploymentSide) nodeUIDs(ctx context.Context) map[types.UID]bool {
	list := &corev1.NodeList{}
	Expect(s.base.Workload.List(ctx, list)).To(Succeed())
	uids := map[types.UID]bool{}
	for _, n := range list.Items {
		uids[n.UID] = true
	}
	return uids
}

// newReadyNodes names the Ready Nodes whose UIDs are not in before.
func newReadyNodes(ctx context.Context, g Gomega, c client.Client, before map[types.UID]bool) []string {
	list := &corev1.NodeList{}
	g.Expect(c.List(ctx, list)).To(Succeed())
	var out []string
	for i := range list.Items {
		if n := &list.Items[i]; !before[n.UID] && scenarios.NodeReady(n) {
			out = append(out, n.Name)
		}
	}
	return out
}

func (s *machineDeploymentSide) finish(ctx context.Context, failed bool, why string) *results.Observation {
	in := scenarios.FinishInput{Failed: failed, Err: why, Workload: s.base.Workload, WorkloadConfig: s.base.WorkloadConfig,
		// The day-2 worker's host joins the pool: the MachineDeployment's
		// next Machine may take it or a free pool host.
		AgentNamespace: s.base.Namespace, PoolHosts: append(poolHostNames(), day2HostName),
		HostLists: []scenarios.HostList{{Client: s.hub, Namespace: s.base.Namespace}}}
	return s.run.Finish(ctx, s.in.Lab, in)
}
