package upgrade

import (
	"context"

	bmov1alpha1 "github.com/metal3-io/baremetal-operator/apis/metal3.io/v1alpha1"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/paritylab/paritylab/framework"
	"github.com/paritylab/paritylab/lab/releases"
	controlplanev1 "github.com/paritylab/paritylab/providers/controlplane/api/v1alpha3"
	"github.com/paritylab/paritylab/results"
	"github.com/paritylab/paritylab/scenarios"
)

var controlPlanes = schema.GroupVersionResource{Group: controlplanev1.GroupVersion.Group, Version: controlplanev1.GroupVersion.Version, Resource: "openshiftassistedcontrolplanes"}

// day2Pool is the pool label of the CAPI flow's day-2 host: its own
// MachineDeployment takes that host and no other free one.
const day2Pool = "upgrade-day2"

// capiSide updates the cluster through its OpenshiftAssistedControlPlane:
// a CAPI user sets spec.distributionVersion and reads UpgradeAvailable and
// UpgradeCompleted; our control-plane provider writes the ClusterVersion.
type capiSide struct {
	in      scenarios.Input
	run     *scenarios.Run
	base    *scenarios.Cluster
	hub     client.Client
	newNode string
}

func newCAPISide(ctx context.Context, in scenarios.Input, run *scenarios.Run, base *scenarios.Cluster) *capiSide {
	Expect(base.Site).NotTo(BeNil(), "the CAPI day-1 cluster is a CAPI site")
	s := &capiSide{in: in, run: run, base: base, hub: in.Lab.Client()}
	// The control plane's conditions and their timeline show in the
	// report; the MAPI flow has no counterpart to compare them with.
	recordUpdateObjects(ctx, in, run, base, s.imageSetName(),
		framework.Watch{Resource: controlPlanes, Namespace: base.Namespace, FieldSelector: "metadata.name=" + base.Site.Name})
	return s
}

func (s *capiSide) controlPlane(ctx context.Context, g Gomega) *controlplanev1.OpenshiftAssistedControlPlane {
	cp := &controlplanev1.OpenshiftAssistedControlPlane{}
	g.Expect(s.hub.Get(ctx, client.ObjectKey{Namespace: s.base.Namespace, Name: s.base.Site.Name}, cp)).To(Succeed())
	return cp
}

func (s *capiSide) setDistributionVersion(ctx context.Context, version string) {
	By("setting the control plane's spec.distributionVersion to " + version)
	cp := s.controlPlane(ctx, Default)
	before := cp.DeepCopy()
	cp.Spec.DistributionVersion = version
	Expect(s.hub.Patch(ctx, cp, client.MergeFrom(before))).To(Succeed())
}

func (s *capiSide) requestUpdate(ctx context.Context, rel releases.Pushed) {
	s.setDistributionVersion(ctx, rel.Version)
}

func (s *capiSide) requestMissing(ctx context.Context, version string) {
	s.setDistributionVersion(ctx, version)
}

// missingReported: the control plane could not read the release image of
// the version asked for. The signal recorded is KubernetesVersionAvailable,
// which upstream's controller sets too when the read fails; our provider's
// UpgradeAvailable=False says the same and shows in the timeline.
func (s *capiSide) missingReported(ctx context.Context, g Gomega) string {
	cp := s.controlPlane(ctx, g)
	for _, t := range []string{controlplanev1.UpgradeAvailableCondition, controlplanev1.KubernetesVersionAvailableCondition} {
		c := meta.FindStatusCondition(cp.Status.Conditions, t)
		g.Expect(c).NotTo(BeNil(), "control plane %s", t)
		g.Expect(c.Status).To(Equal(metav1.ConditionFalse), "control plane %s", t)
		g.Expect(c.ObservedGeneration).To(Equal(cp.Generation), "control plane %s of the current spec", t)
	}
	c := meta.FindStatusCondition(cp.Status.Conditions, controlplanev1.KubernetesVersionAvailableCondition)
	return "OpenshiftAssistedControlPlane KubernetesVersionAvailable=False/" + c.Reason
}

func (s *capiSide) withdraw(ctx context.Context, running releases.Pushed) {
	s.setDistributionVersion(ctx, running.Version)
	iv := interval(s.in, "wait-upgrade")
	Eventually(func(g Gomega) {
		cp := s.controlPlane(ctx, g)
		g.Expect(meta.IsStatusConditionTrue(cp.Status.Conditions, controlplanev1.UpgradeAvailableCondition)).To(BeTrue(), "UpgradeAvailable")
		s.expectUpgradeCompleted(g, cp, running.Version)
	}).WithContext(ctx).WithTimeout(iv.Timeout).WithPolling(iv.Polling).Should(Succeed())
}

// completed: the control plane reports the version installed and
// UpgradeCompleted, after the spoke's history did.
func (s *capiSide) completed(ctx context.Context, g Gomega, version string) {
	expectHistoryCompleted(ctx, g, s.base.Workload, version)
	s.expectUpgradeCompleted(g, s.controlPlane(ctx, g), version)
}

func (s *capiSide) expectUpgradeCompleted(g Gomega, cp *controlplanev1.OpenshiftAssistedControlPlane, version string) {
	g.Expect(cp.Status.DistributionVersion).To(Equal(version), "control plane status.distributionVersion")
	c := meta.FindStatusCondition(cp.Status.Conditions, controlplanev1.UpgradeCompletedCondition)
	g.Expect(c).NotTo(BeNil(), "control plane UpgradeCompleted")
	g.Expect(c.Status).To(Equal(metav1.ConditionTrue), "control plane UpgradeCompleted: %s", c.Message)
	g.Expect(c.ObservedGeneration).To(Equal(cp.Generation), "control plane UpgradeCompleted of the current spec")
}

// inventory: the cluster's Machines and the BareMetalHosts of its
// namespace on the hub.
func (s *capiSide) inventory(ctx context.Context) map[types.UID]string {
	out := map[types.UID]string{}
	machines := &clusterv1.MachineList{}
	Expect(s.hub.List(ctx, machines, client.InNamespace(s.base.Namespace),
		client.MatchingLabels{clusterv1.ClusterNameLabel: s.base.Site.Name})).To(Succeed())
	for _, m := range machines.Items {
		out[m.UID] = "Machine/" + m.Name
	}
	hosts := &bmov1alpha1.BareMetalHostList{}
	Expect(s.hub.List(ctx, hosts, client.InNamespace(s.base.Namespace))).To(Succeed())
	for _, h := range hosts.Items {
		out[h.UID] = "BareMetalHost/" + h.Name
	}
	return out
}

// imageSetName is the ClusterImageSet our control-plane provider keeps
// for the cluster, named as CAPOA names it: <namespace>-<cluster>.
func (s *capiSide) imageSetName() string { return s.base.Namespace + "-" + s.base.Site.Name }

// addWorker: a MachineDeployment of one replica over a new host of its
// own pool (a worker joins a CAPI cluster only as a Machine).
func (s *capiSide) addWorker(ctx context.Context, ready func()) string {
	return scenarios.AddCAPIDay2Worker(ctx, scenarios.CAPIDay2WorkerInput{Hosts: s.in.Hosts, Hub: s.hub, Spoke: s.base.Workload,
		Site: *s.base.Site, HostName: day2HostName, Pool: day2Pool, Interval: interval(s.in, "wait-machines-running"),
		Ready: func(node string) { s.newNode = node; ready() }})
}

func (s *capiSide) finish(ctx context.Context, failed bool, why string) *results.Observation {
	in := scenarios.FinishInput{Failed: failed, Err: why, Workload: s.base.Workload, WorkloadConfig: s.base.WorkloadConfig,
		// Only the day-2 worker's Node (none if it never joined): the
		// other Nodes are the ones earlier scenarios left.
		AgentNamespace: s.base.Namespace, NodeNames: []string{s.newNode}}
	return s.run.Finish(ctx, s.in.Lab, in)
}
