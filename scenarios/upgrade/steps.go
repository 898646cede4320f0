package upgrade

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	configv1 "github.com/openshift/api/config/v1"
	hivev1 "github.com/openshift/hive/apis/hive/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/paritylab/paritylab/lab/releases"
	"github.com/paritylab/paritylab/lab/workload/cvo"
	"github.com/paritylab/paritylab/scenarios"
)

// gateOperator is the ClusterOperator the scenario makes not upgradeable
// in sub-case d, as an operator does that needs an admin's action before
// the next minor release.
const gateOperator = "cloud-credential"

// steps runs the sub-cases, the same for both flows, and records what the
// spoke's ClusterVersion and the hub's ClusterImageSet show after each as
// properties of those objects (keys "<sub-case>.<fact>").
type steps struct {
	in    scenarios.Input
	run   *scenarios.Run
	side  side
	spoke client.Client
	hub   client.Client
	times []subCaseTime
}

func newSteps(in scenarios.Input, run *scenarios.Run, base *scenarios.Cluster, s side) *steps {
	return &steps{in: in, run: run, side: s, spoke: base.Workload, hub: in.Lab.Client()}
}

func (st *steps) all(ctx context.Context) {
	cv := st.clusterVersion(ctx)
	Expect(cv.Status.Desired.Version).To(Equal(installedVersion), "the upgrade scenario starts from day-1 clusters at %s (OPENSHIFT_VERSION)", installedVersion)
	st.recordImageSet(ctx, "day1")
	machines, nodes := st.side.inventory(ctx), st.nodeUIDs(ctx)

	st.subCase("a: GA update "+installedVersion+" -> "+patchVersion, func() {
		st.update(ctx, "a", release(st.in, patchVersion), milestonePatchDone)
	})
	st.subCase("b: minor update "+patchVersion+" -> "+minorVersion, func() {
		st.update(ctx, "b", release(st.in, minorVersion), milestoneMinorDone)
	})
	st.subCase("c: update to "+missingVersion+", which the registry does not have", func() {
		st.missing(ctx)
	})
	st.subCase("d: update to "+gatedVersion+" while "+gateOperator+" reports Upgradeable=False", func() {
		st.gated(ctx)
	})
	st.recordKept(ctx, machines, nodes)
	st.subCase("e: a day-2 worker after the updates", func() {
		st.side.addWorker(ctx, func() {
			st.run.Reach(milestoneWorkerAdded)
			st.recordImageSet(ctx, "e")
			st.recordNodes(ctx, "e")
		})
	})
	st.cvProperty(ctx, "history", describeHistory(st.in, st.clusterVersion(ctx).Status.History))
}

// subCase runs one sub-case and keeps how long it took.
func (st *steps) subCase(name string, body func()) {
	By("sub-case " + name)
	start := time.Now()
	body()
	st.times = append(st.times, subCaseTime{name: name[:1], took: time.Since(start)})
}

// update asks for rel the flow's way and waits until the flow reports it
// done.
func (st *steps) update(ctx context.Context, key string, rel releases.Pushed, milestone string) {
	st.side.requestUpdate(ctx, rel)
	st.waitCompleted(ctx, rel.Version)
	st.run.Reach(milestone)
	st.recordClusterVersion(ctx, key)
	st.recordNodes(ctx, key)
	st.recordImageSet(ctx, key)
}

func (st *steps) waitCompleted(ctx context.Context, version string) {
	By("waiting for the update to " + version + " to be reported complete")
	iv := interval(st.in, "wait-upgrade")
	Eventually(func(g Gomega) {
		st.side.completed(ctx, g, version)
	}).WithContext(ctx).WithTimeout(iv.Timeout).WithPolling(iv.Polling).Should(Succeed())
}

// missing asks for a release the registry lacks, waits for the flow's
// first failure signal, then withdraws the request.
func (st *steps) missing(ctx context.Context) {
	st.side.requestMissing(ctx, missingVersion)
	By("waiting for the flow to report that " + missingVersion + " cannot be retrieved")
	iv := interval(st.in, "wait-upgrade")
	var how string
	Eventually(func(g Gomega) {
		how = st.side.missingReported(ctx, g)
	}).WithContext(ctx).WithTimeout(iv.Timeout).WithPolling(iv.Polling).Should(Succeed())
	st.run.Reach(milestoneMissingSignal)
	st.cvProperty(ctx, "c.signal", how)
	st.recordClusterVersion(ctx, "c")
	st.recordNodes(ctx, "c")
	By("asking for the running release " + minorVersion + " again")
	st.side.withdraw(ctx, release(st.in, minorVersion))
	cv := st.clusterVersion(ctx)
	st.cvProperty(ctx, "c.withdrawn.desired", describeRelease(st.in, cv.Status.Desired.Image))
	st.cvProperty(ctx, "c.withdrawn.conditions", describeConditions(cv.Status.Conditions))
}

// gated makes an operator not upgradeable, asks for the next minor
// release, and records whether the version operator refused it or the
// flow's request got past the gate.
func (st *steps) gated(ctx context.Context) {
	st.gate(ctx)
	target := release(st.in, gatedVersion)
	st.side.requestUpdate(ctx, target)
	By("waiting for the version operator to refuse the update to " + gatedVersion + " or for the flow to report it complete")
	iv := interval(st.in, "wait-upgrade")
	var outcome string
	Eventually(func(g Gomega) {
		outcome = st.decided(ctx, g, target)
	}).WithContext(ctx).WithTimeout(iv.Timeout).WithPolling(iv.Polling).Should(Succeed())
	st.run.Reach(milestoneGatedDecided)
	st.cvProperty(ctx, "d.outcome", outcome)
	st.recordClusterVersion(ctx, "d")
	st.recordNodes(ctx, "d")
	st.recordImageSet(ctx, "d")
}

// decided is the gated request's outcome once there is one: refused by
// the version operator for this request, or reported complete.
func (st *steps) decided(ctx context.Context, g Gomega, target releases.Pushed) string {
	cv := &configv1.ClusterVersion{}
	g.Expect(st.spoke.Get(ctx, client.ObjectKey{Name: cvo.Name}, cv)).To(Succeed())
	if c := cvo.FindCondition(cv.Status.Conditions, cvo.ConditionReleaseAccepted); c != nil && c.Status == configv1.ConditionFalse &&
		cv.Status.ObservedGeneration == cv.Generation && cv.Spec.DesiredUpdate != nil && cv.Spec.DesiredUpdate.Image == target.Image {
		return "refused: ReleaseAccepted=False/" + c.Reason
	}
	st.side.completed(ctx, g, target.Version)
	return "completed " + target.Version
}

// gate makes gateOperator report Upgradeable=False and waits for the
// ClusterVersion to say so.
func (st *steps) gate(ctx context.Context) {
	By("making ClusterOperator " + gateOperator + " report Upgradeable=False")
	co := &configv1.ClusterOperator{ObjectMeta: metav1.ObjectMeta{Name: gateOperator}}
	Expect(st.spoke.Create(ctx, co)).To(Succeed())
	now := metav1.Now()
	co.Status.Conditions = []configv1.ClusterOperatorStatusCondition{
		{Type: configv1.OperatorAvailable, Status: configv1.ConditionTrue, Reason: "AsExpected", LastTransitionTime: now},
		{Type: configv1.OperatorProgressing, Status: configv1.ConditionFalse, Reason: "AsExpected", LastTransitionTime: now},
		{Type: configv1.OperatorDegraded, Status: configv1.ConditionFalse, Reason: "AsExpected", LastTransitionTime: now},
		{Type: configv1.OperatorUpgradeable, Status: configv1.ConditionFalse, Reason: "CredentialsNotConfirmed", LastTransitionTime: now,
			Message: "the manually managed cloud credentials are not confirmed for the next minor release"},
	}
	Expect(st.spoke.Status().Update(ctx, co)).To(Succeed())
	iv := interval(st.in, "wait-object")
	Eventually(func(g Gomega) {
		cv := &configv1.ClusterVersion{}
		g.Expect(st.spoke.Get(ctx, client.ObjectKey{Name: cvo.Name}, cv)).To(Succeed())
		c := cvo.FindCondition(cv.Status.Conditions, configv1.OperatorUpgradeable)
		g.Expect(c).NotTo(BeNil(), "ClusterVersion Upgradeable")
		g.Expect(c.Status).To(Equal(configv1.ConditionFalse))
	}).WithContext(ctx).WithTimeout(iv.Timeout).WithPolling(iv.Polling).Should(Succeed())
}

// recordKept records whether the updates kept every Machine, host and
// Node (an OpenShift update is in place: nothing is reprovisioned).
func (st *steps) recordKept(ctx context.Context, machines map[types.UID]string, nodes map[types.UID]string) {
	st.cvProperty(ctx, "updates.machinesAndHostsKept", kept(machines, st.side.inventory(ctx)))
	st.cvProperty(ctx, "updates.nodesKept", kept(nodes, st.nodeUIDs(ctx)))
}

// recordNodes records the kubelet the Ready Nodes report once they agree
// (the machine-config part of an update moves nodes in place; worker pools
// may follow the update's completion by a moment), or, should they not
// agree within the upgrade wait, every kubelet they report. A Node that is
// not Ready, which another scenario sharing the cluster may have left
// behind, has no kubelet to report.
func (st *steps) recordNodes(ctx context.Context, key string) {
	By("waiting for the Ready Nodes to report one kubelet")
	iv := interval(st.in, "wait-upgrade")
	deadline := time.Now().Add(iv.Timeout)
	kubelets := st.readyKubelets(ctx)
	for len(kubelets) > 1 && time.Now().Before(deadline) {
		select {
		case <-ctx.Done():
			Fail("interrupted waiting for the Ready Nodes to report one kubelet")
		case <-time.After(iv.Polling):
		}
		kubelets = st.readyKubelets(ctx)
	}
	st.cvProperty(ctx, key+".nodes", describeKubelets(kubelets))
}

// readyKubelets are the distinct kubelet versions the Ready Nodes report,
// sorted.
func (st *steps) readyKubelets(ctx context.Context) []string {
	list := &corev1.NodeList{}
	Expect(st.spoke.List(ctx, list)).To(Succeed())
	seen := map[string]bool{}
	for i := range list.Items {
		if scenarios.NodeReady(&list.Items[i]) {
			seen[list.Items[i].Status.NodeInfo.KubeletVersion] = true
		}
	}
	return slices.Sorted(maps.Keys(seen))
}

// kept says whether after holds every object of before, by UID.
func kept(before, after map[types.UID]string) string {
	var gone []string
	for uid, name := range before {
		if _, ok := after[uid]; !ok {
			gone = append(gone, name)
		}
	}
	if len(gone) == 0 {
		return "all kept"
	}
	return fmt.Sprintf("%d gone", len(gone))
}

func (st *steps) nodeUIDs(ctx context.Context) map[types.UID]string {
	list := &corev1.NodeList{}
	Expect(st.spoke.List(ctx, list)).To(Succeed())
	out := map[types.UID]string{}
	for _, n := range list.Items {
		out[n.UID] = "Node/" + n.Name
	}
	return out
}

func (st *steps) clusterVersion(ctx context.Context) *configv1.ClusterVersion {
	cv := &configv1.ClusterVersion{}
	Expect(st.spoke.Get(ctx, client.ObjectKey{Name: cvo.Name}, cv)).To(Succeed())
	return cv
}

// recordClusterVersion records what a sub-case left on the ClusterVersion:
// the desired update as written, the newest history entry and the
// conditions.
func (st *steps) recordClusterVersion(ctx context.Context, key string) {
	cv := st.clusterVersion(ctx)
	st.cvProperty(ctx, key+".desiredUpdate", describeUpdate(st.in, cv.Spec.DesiredUpdate))
	if len(cv.Status.History) > 0 {
		st.cvProperty(ctx, key+".history[0]", describeEntry(st.in, cv.Status.History[0]))
	}
	st.cvProperty(ctx, key+".conditions", describeConditions(cv.Status.Conditions))
}

func (st *steps) cvProperty(ctx context.Context, key, value string) {
	st.run.SetProperty(st.clusterVersion(ctx).UID, key, value)
}

// recordImageSet records which release the flow's ClusterImageSet names.
func (st *steps) recordImageSet(ctx context.Context, key string) {
	cis := &hivev1.ClusterImageSet{}
	Expect(st.hub.Get(ctx, client.ObjectKey{Name: st.side.imageSetName()}, cis)).To(Succeed())
	st.run.SetProperty(cis.UID, key+".releaseImage", describeRelease(st.in, cis.Spec.ReleaseImage))
}
