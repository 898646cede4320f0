package hypershift

import (
	"context"
	"fmt"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	hypershiftv1beta1 "github.com/openshift/hypershift/api/hypershift/v1beta1"
	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	labhypershift "github.com/paritylab/paritylab/lab/hypershift"
	"github.com/paritylab/paritylab/lab/hypershift/apiproxy"
	capiagentv1beta1 "github.com/paritylab/paritylab/providers/agent/api/v1beta1"
	agentv1beta1 "github.com/paritylab/paritylab/providers/thirdparty/agentinstall/v1beta1"
	"github.com/paritylab/paritylab/results"
	"github.com/paritylab/paritylab/scenarios"
)

// MigrationName is the scenario that compares a hosted cluster's CAPI
// objects before and after its migration from the standard to the private
// CAPI types, as an unmodified CAPI client reads them.
const MigrationName = results.ScenarioHyperShiftMigration

// observeWindow is how long each side of the migration scenario watches
// the settled cluster.
const observeWindow = 20 * time.Second

const milestoneObserved = "observed"

// MigrationMilestones are the migration scenario's milestones, the same
// before and after the migration.
func MigrationMilestones() []results.Milestone {
	return []results.Milestone{{Name: milestoneObserved,
		Description: fmt.Sprintf("the hosted cluster's 2 Machines Running and their Nodes Ready all through %s", observeWindow)}}
}

// MigrationFixture is what both sides observe: the hosted cluster of the
// standard NodePool flow, scaled back to 2.
func MigrationFixture() results.Fixture {
	return results.Fixture{Name: "local-hosted-2-nodes", Shape: map[string]int{"nodePool": poolHosts}}
}

// migrationSpecs declares the migration scenario: the standard cluster
// observed, then migrated (after a forced failure that rolls back) and
// observed again, then the diff.
func migrationSpecs(inputGetter func() scenarios.Input) {
	It(scenarios.FlowSpecText(results.FlowCAPI, "the standard NodePool flow's hosted cluster, scaled back to 2, observed on the standard CAPI types", MigrationName), func(ctx SpecContext) {
		in := inputGetter()
		f := migratingFlow(in)
		setUp := connect(in, nil, f, false)
		setUp.connectHosted()
		By("scaling the NodePool back to 2: the freed Agent is bound again")
		setUp.scale(ctx, 2)
		setUp.waitMachines(ctx, 2)
		observe(ctx, in, f, results.FlowCAPI)
	}, SpecTimeout(30*time.Minute))
	It(scenarios.FlowSpecText(results.FlowCAPIMigrated, "a forced migration failure rolls back, the migration to the private types leaves the Nodes undisturbed, and the cluster is observed through the API proxy", MigrationName), func(ctx SpecContext) {
		in := inputGetter()
		f := migratingFlow(in)
		m := connect(in, nil, f, false)
		m.connectHosted()
		before := m.snapshot(ctx, m.capi)
		m.failedMigration(ctx, before)
		m.migration(ctx, before)
		observe(ctx, in, f, results.FlowCAPIMigrated)
	}, SpecTimeout(30*time.Minute))
	scenarios.DiffSpec(MigrationName, inputGetter)
}

// migratingFlow is the standard NodePool flow's cluster, which the
// migration scenario starts from.
func migratingFlow(in scenarios.Input) hostedFlow {
	Expect(standardFlowRan).To(BeTrue(), "the migration starts from the hosted cluster of the standard NodePool flow (%s), which did not pass", PrivateTypesName)
	return flows(releaseImage(in))[0]
}

// observe is one side of the migration scenario: a run that watches the
// settled cluster for observeWindow, reading its CAPI objects straight
// from the hub before the migration and through an API proxy after it.
func observe(ctx context.Context, in scenarios.Input, f hostedFlow, flow results.Flow) {
	run := scenarios.NewRunAfterSetUp(ctx, MigrationName, flow, MigrationFixture(), MigrationMilestones())
	run.SetCluster(f.cluster.Name)
	s := connect(in, run, f, flow == results.FlowCAPIMigrated)
	DeferCleanup(func(ctx SpecContext) { scenarios.KeepObservation(ctx, in, s.finish) })
	s.recordHub(ctx)
	s.connectHosted()
	s.recordNodes(ctx)
	By("watching the settled cluster for " + observeWindow.String())
	Consistently(func(g Gomega) { s.expectMachines(ctx, g, 2) }).WithContext(ctx).
		WithTimeout(observeWindow).WithPolling(2 * time.Second).Should(Succeed())
	run.Reach(milestoneObserved)
}

// clusterSnapshot is what must not change across a migration: the
// Machines (name → UID as the client read them, provider ID, Node), the
// Nodes' UIDs, the AgentMachines' UIDs and the Agents' bindings.
type clusterSnapshot struct {
	machineUIDs   map[string]types.UID
	providerIDs   map[string]string
	nodeRefs      map[string]string
	nodeUIDs      map[string]types.UID
	agentMachines map[string]types.UID
	agentBindings map[string]string
	csrs          int
}

// snapshot reads the cluster; capi reads its Machines.
func (s *hostedSide) snapshot(ctx context.Context, capi client.Client) clusterSnapshot {
	cpns := s.flow.cluster.ControlPlaneNamespace()
	snap := clusterSnapshot{machineUIDs: map[string]types.UID{}, providerIDs: map[string]string{}, nodeRefs: map[string]string{},
		nodeUIDs: map[string]types.UID{}, agentMachines: map[string]types.UID{}, agentBindings: map[string]string{}}
	machines := &clusterv1.MachineList{}
	Expect(capi.List(ctx, machines, client.InNamespace(cpns))).To(Succeed())
	for _, m := range machines.Items {
		snap.machineUIDs[m.Name], snap.providerIDs[m.Name], snap.nodeRefs[m.Name] = m.UID, m.Spec.ProviderID, m.Status.NodeRef.Name
	}
	nodes := &corev1.NodeList{}
	Expect(s.hosted.List(ctx, nodes)).To(Succeed())
	for _, n := range nodes.Items {
		snap.nodeUIDs[n.Name] = n.UID
	}
	ams := &capiagentv1beta1.AgentMachineList{}
	Expect(s.hub.List(ctx, ams, client.InNamespace(cpns))).To(Succeed())
	for _, am := range ams.Items {
		snap.agentMachines[am.Name] = am.UID
	}
	agents := &agentv1beta1.AgentList{}
	Expect(s.hub.List(ctx, agents, client.InNamespace(s.flow.cluster.AgentNamespace))).To(Succeed())
	for _, a := range agents.Items {
		if a.Spec.ClusterDeploymentName != nil {
			snap.agentBindings[a.Name] = a.Spec.ClusterDeploymentName.Namespace + "/" + a.Spec.ClusterDeploymentName.Name
		}
	}
	csrs := &certificatesv1.CertificateSigningRequestList{}
	Expect(s.hosted.List(ctx, csrs)).To(Succeed())
	snap.csrs = len(csrs.Items)
	Expect(snap.machineUIDs).To(HaveLen(2))
	Expect(snap.agentBindings).To(HaveLen(2))
	return snap
}

// failedMigration migrates with a failure injected at the health check:
// the migration rolls back to the standard types, the Machines and
// everything else as they were, and says why on the HostedCluster.
func (s *hostedSide) failedMigration(ctx context.Context, before clusterSnapshot) {
	By("migrating with a failure injected at the health check: the migration rolls back")
	s.annotate(ctx, map[string]*string{labhypershift.MigrateCAPITypesAnnotation: ptrTo("private"),
		labhypershift.MigrationFailAtAnnotation: ptrTo("health-check")})
	hc := s.flow.cluster.HostedCluster()
	s.watchMigration(ctx, before, func(g Gomega) {
		g.Expect(s.hub.Get(ctx, client.ObjectKeyFromObject(hc), hc)).To(Succeed())
		g.Expect(hc.Annotations).To(HaveKey(labhypershift.MigrationFailedAnnotation))
		g.Expect(hc.Annotations).NotTo(HaveKey(labhypershift.MigrationInProgressAnnotation))
	})
	Expect(hc.Annotations).NotTo(HaveKey(labhypershift.PrivateCAPITypesAnnotation))
	Expect(s.privateObjects(ctx, "Machine")).To(BeEmpty(), "the rollback deletes the private copies")
	Expect(s.snapshot(ctx, s.capi)).To(Equal(before), "the rollback restores the cluster")
	s.expectAgentMachineOwners(ctx, clusterv1.GroupVersion.Group)
	clusters := &clusterv1.ClusterList{}
	Expect(s.hub.List(ctx, clusters, client.InNamespace(s.flow.cluster.ControlPlaneNamespace()))).To(Succeed())
	Expect(clusters.Items).To(HaveLen(1), "the hosted cluster's CAPI Cluster (named by its infrastructure ID)")
	Expect(clusters.Items[0].Spec.Paused).NotTo(HaveValue(BeTrue()), "the rollback unpauses the standard Cluster")
	events := &corev1.EventList{}
	Expect(s.hub.List(ctx, events, client.InNamespace(hc.Namespace))).To(Succeed())
	Expect(events.Items).To(ContainElement(And(HaveField("Reason", labhypershift.MigrationFailedReason), HaveField("Type", corev1.EventTypeWarning))))
	AddReportEntry("HyperShift migration: forced failure", "rolled back: "+hc.Annotations[labhypershift.MigrationFailedAnnotation])
}

// migration migrates the cluster to the private types and checks that its
// nodes noticed nothing: every Node Ready all along and the same, no new
// CSR, the AgentMachines and the Agents' bindings the same, the Machines'
// names, provider IDs and Nodes the same as the client reads them through
// the proxy, and nothing left in cluster.x-k8s.io.
func (s *hostedSide) migration(ctx context.Context, before clusterSnapshot) {
	By("migrating the running cluster to the private CAPI types: its Nodes notice nothing")
	start := time.Now()
	s.annotate(ctx, map[string]*string{labhypershift.MigrationFailedAnnotation: nil, labhypershift.MigrationFailAtAnnotation: nil,
		labhypershift.MigrateCAPITypesAnnotation: ptrTo("private")})
	hc := s.flow.cluster.HostedCluster()
	s.watchMigration(ctx, before, func(g Gomega) {
		g.Expect(s.hub.Get(ctx, client.ObjectKeyFromObject(hc), hc)).To(Succeed())
		g.Expect(hc.Annotations).NotTo(HaveKey(labhypershift.MigrationFailedAnnotation))
		g.Expect(hc.Annotations).To(HaveKeyWithValue(labhypershift.PrivateCAPITypesAnnotation, "true"))
		g.Expect(hc.Annotations).NotTo(HaveKey(labhypershift.MigrationInProgressAnnotation))
		g.Expect(s.standardObjects(ctx, g, "Machine")).To(BeEmpty(), "the standard Machines deleted")
	})
	AddReportEntry("HyperShift migration: migrated", time.Since(start).Round(time.Second).String())
	proxied := connect(s.in, nil, s.flow, true)
	defer proxied.stopProxy()
	after := s.snapshot(ctx, proxied.capi)
	Expect(after.machineUIDs).To(HaveLen(len(before.machineUIDs)))
	for name := range before.machineUIDs {
		Expect(after.machineUIDs).To(HaveKey(name), "the Machine keeps its name")
	}
	after.machineUIDs = before.machineUIDs // copies: new UIDs by design
	Expect(after).To(Equal(before), "the migration changes nothing the cluster's clients and nodes see")
	s.expectAgentMachineOwners(ctx, apiproxy.PrivateGroup)
}

// watchMigration waits for done while it checks, every 2 s, that no Node
// of the cluster is missing, replaced or not Ready.
func (s *hostedSide) watchMigration(ctx context.Context, before clusterSnapshot, done func(Gomega)) {
	disrupted := map[string]string{}
	Eventually(func(g Gomega) {
		for name, uid := range before.nodeUIDs {
			node := &corev1.Node{}
			switch err := s.hosted.Get(ctx, client.ObjectKey{Name: name}, node); {
			case err != nil:
				disrupted[name] = "unreadable: " + err.Error()
			case node.UID != uid:
				disrupted[name] = "replaced"
			case !scenarios.NodeReady(node):
				disrupted[name] = "not Ready"
			}
		}
		done(g)
	}).WithContext(ctx).WithTimeout(interval(s.in, "wait-install").Timeout).WithPolling(2 * time.Second).Should(Succeed())
	Expect(disrupted).To(BeEmpty(), "Nodes disrupted while the migration ran")
}

// expectAgentMachineOwners checks that the hub stores every AgentMachine
// owned by a Machine of group.
func (s *hostedSide) expectAgentMachineOwners(ctx context.Context, group string) {
	ams := &capiagentv1beta1.AgentMachineList{}
	Expect(s.hub.List(ctx, ams, client.InNamespace(s.flow.cluster.ControlPlaneNamespace()))).To(Succeed())
	for _, am := range ams.Items {
		var groups []string
		for _, ref := range am.OwnerReferences {
			if ref.Kind == "Machine" {
				gv, err := schema.ParseGroupVersion(ref.APIVersion)
				Expect(err).NotTo(HaveOccurred())
				groups = append(groups, gv.Group)
			}
		}
		Expect(groups).To(ConsistOf(group), "AgentMachine %s's Machine owner as the hub stores it", am.Name)
	}
}

// privateObjects lists a CAPI kind of the cluster in the private group,
// straight from the hub.
func (s *hostedSide) privateObjects(ctx context.Context, kind string) []unstructured.Unstructured {
	l := &unstructured.UnstructuredList{}
	l.SetGroupVersionKind(schema.GroupVersionKind{Group: apiproxy.PrivateGroup, Version: "v1beta2", Kind: kind + "List"})
	Expect(s.hub.List(ctx, l, client.InNamespace(s.flow.cluster.ControlPlaneNamespace()))).To(Succeed())
	return l.Items
}

// standardObjects lists a CAPI kind of the cluster in cluster.x-k8s.io.
func (s *hostedSide) standardObjects(ctx context.Context, g Gomega, kind string) []unstructured.Unstructured {
	l := &unstructured.UnstructuredList{}
	l.SetGroupVersionKind(clusterv1.GroupVersion.WithKind(kind + "List"))
	g.Expect(s.hub.List(ctx, l, client.InNamespace(s.flow.cluster.ControlPlaneNamespace()))).To(Succeed())
	return l.Items
}

// annotate sets (or, for nil, removes) annotations of the HostedCluster.
func (s *hostedSide) annotate(ctx context.Context, set map[string]*string) {
	hc := &hypershiftv1beta1.HostedCluster{}
	Expect(s.hub.Get(ctx, client.ObjectKeyFromObject(s.flow.cluster.HostedCluster()), hc)).To(Succeed())
	patch := client.MergeFrom(hc.DeepCopy())
	labhypershift.ApplyAnnotations(hc, set)
	Expect(s.hub.Patch(ctx, hc, patch)).To(Succeed())
}

func ptrTo(s string) *string { return &s }
