package day2scale

import (
	"context"
	"fmt"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	machinev1beta1 "github.com/openshift/api/machine/v1beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/paritylab/paritylab/framework"
	"github.com/paritylab/paritylab/lab/mapi"
	"github.com/paritylab/paritylab/results"
	"github.com/paritylab/paritylab/scenarios"
)

// mapiDeleteAnnotation is MAO's delete annotation; MAPI counts it only
// with a non-empty value.
const mapiDeleteAnnotation = "machine.openshift.io/delete-machine"

// machineSetSide scales workers with a MAO MachineSet in the spoke, over
// BareMetalHosts in the spoke's machine API namespace, and adds a worker
// through ZTP day 2.
type machineSetSide struct {
	in    scenarios.Input
	run   *scenarios.Run
	base  *scenarios.Cluster
	spoke client.Client
	name  string
}

func newMachineSetSide(ctx context.Context, in scenarios.Input, run *scenarios.Run, base *scenarios.Cluster) *machineSetSide {
	ns := scenarios.MachineAPINamespace
	Expect(run.Record(ctx, base.WorkloadConfig, []string{ns},
		framework.Watch{Resource: scenarios.MAPIMachines, Namespace: ns, Role: "machine"},
		framework.Watch{Resource: scenarios.MAPIMachineSets, Namespace: ns, Role: "machine-set"},
		// Which pool host a scale-up takes is random on both sides: the
		// hosts' lifecycles are compared together, not one by one.
		framework.Watch{Resource: scenarios.BareMetalHosts, Namespace: ns, Role: "host", Interchangeable: true},
		scenarios.NodeIdentities,
	)).To(Succeed())
	return &machineSetSide{in: in, run: run, base: base, spoke: base.Workload}
}

// create copies the installer's worker MachineSet (its providerSpec, user
// data and labels) as a new one of 0 replicas, as an admin adds a
// MachineSet, and moves the pool's hosts into the spoke.
func (s *machineSetSide) create(ctx context.Context) {
	By("moving the pool's hosts into the spoke's machine API namespace")
	var claims []framework.HostClaim
	for i := range scalePoolHosts {
		claims = append(claims, framework.HostClaim{Cluster: s.spoke, Namespace: scenarios.MachineAPINamespace, Name: poolHostName(i)})
	}
	_, err := s.in.Hosts.Claim(ctx, claims...)
	Expect(err).NotTo(HaveOccurred())

	By("creating a worker MachineSet of 0 replicas from the installer's")
	ms := scenarios.WorkerMachineSet(ctx, s.spoke, "scale", 0)
	s.name = ms.Name
	Expect(s.spoke.Create(ctx, ms)).To(Succeed())
}

func (s *machineSetSide) patch(ctx context.Context, mutate func(*machinev1beta1.MachineSet)) {
	ms := &machinev1beta1.MachineSet{}
	Expect(s.spoke.Get(ctx, client.ObjectKey{Namespace: scenarios.MachineAPINamespace, Name: s.name}, ms)).To(Succeed())
	p := client.MergeFrom(ms.DeepCopy())
	mutate(ms)
	Expect(s.spoke.Patch(ctx, ms, p)).To(Succeed())
}

func (s *machineSetSide) scale(ctx context.Context, n int) {
	s.patch(ctx, func(ms *machinev1beta1.MachineSet) { ms.Spec.Replicas = ptr.To(int32(n)) })
}

func (s *machineSetSide) setDeletionOrder(ctx context.Context, order string) {
	s.patch(ctx, func(ms *machinev1beta1.MachineSet) { ms.Spec.DeletePolicy = order })
}

func (s *machineSetSide) markForDeletion(ctx context.Context, name string) {
	m := &machinev1beta1.Machine{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: scenarios.MachineAPINamespace}}
	Expect(s.spoke.Patch(ctx, m, client.RawPatch("application/merge-patch+json",
		[]byte(`{"metadata":{"annotations":{"`+mapiDeleteAnnotation+`":"true"}}}`)))).To(Succeed())
}

// waitRunning: exactly n Machines of the MachineSet, Running, linked to
// a Ready Node, none being deleted, their hosts' other Machines gone.
func (s *machineSetSide) waitRunning(ctx context.Context, n int) []worker {
	By(fmt.Sprintf("waiting for %d Machines of %s Running with Ready nodes", n, s.name))
	iv := interval(s.in, "wait-machines-running")
	var out []worker
	Eventually(func(g Gomega) {
		list := &machinev1beta1.MachineList{}
		g.Expect(s.spoke.List(ctx, list, client.InNamespace(scenarios.MachineAPINamespace),
			client.MatchingLabels{mapi.MachineSetLabel: s.name})).To(Succeed())
		g.Expect(list.Items).To(HaveLen(n))
		out = out[:0]
		for _, m := range list.Items {
			g.Expect(m.DeletionTimestamp.IsZero()).To(BeTrue(), "Machine %s is being deleted", m.Name)
			g.Expect(m.Status.Phase).To(HaveValue(Equal(machinev1beta1.PhaseRunning)), "Machine %s", m.Name)
			g.Expect(m.Status.NodeRef).NotTo(BeNil(), "Machine %s nodeRef", m.Name)
			expectNodeReady(ctx, g, s.spoke, m.Status.NodeRef.Name)
			out = append(out, worker{Name: m.Name, UID: m.UID, Created: m.CreationTimestamp.Time})
		}
		scenarios.ExpectMAPIMachineSetsSettled(ctx, g, s.spoke, scenarios.MachineAPINamespace)
	}).WithContext(ctx).WithTimeout(iv.Timeout).WithPolling(iv.Polling).Should(Succeed())
	return out
}

// addWorker is ZTP day 2: a BareMetalHost labelled with the site's
// InfraEnv on the hub; the assisted flow boots, installs and joins it.
func (s *machineSetSide) addWorker(ctx context.Context, ready func()) {
	site := s.base.ZTP
	Expect(site).NotTo(BeNil(), "the MAPI day-1 cluster is a ZTP site")
	scenarios.AddZTPDay2Worker(ctx, scenarios.ZTPDay2WorkerInput{Hosts: s.in.Hosts, Hub: s.in.Lab.Client(), Spoke: s.spoke,
		Site: *site, Name: day2HostName, Interval: interval(s.in, "wait-machines-running"), Ready: ready})
}

// finish: the hosts in the spoke's machine API namespace (see the day1
// classic flow's finish).
func (s *machineSetSide) finish(ctx context.Context, failed bool, why string) *results.Observation {
	in := scenarios.FinishInput{Failed: failed, Err: why, Workload: s.spoke, WorkloadConfig: s.base.WorkloadConfig,
		AgentNamespace: s.base.Namespace, PoolHosts: poolHostNames(),
		HostLists: []scenarios.HostList{{Client: s.spoke, Namespace: scenarios.MachineAPINamespace}}}
	return s.run.Finish(ctx, s.in.Lab, in)
}

func expectNodeReady(ctx context.Context, g Gomega, c client.Client, name string) {
	scenarios.ExpectNodeReady(ctx, g, c, name)
}
