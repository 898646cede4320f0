package openshiftassistedcontrolplane_test

import (
	"context"
	"testing"

	. "github.com/onsi/gomega"
	configv1 "github.com/openshift/api/config/v1"
	hivev1 "github.com/openshift/hive/apis/hive/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	controlplanev1 "github.com/paritylab/paritylab/providers/controlplane/api/v1alpha3"
	hiveextv1 "github.com/paritylab/paritylab/providers/thirdparty/hiveextensions/v1beta1"
)

// clusterVersion plays the workload cluster's version operator: the
// ClusterVersion "version" of the API server (there is one per cluster, so
// the upgrade test runs alone against it).
type clusterVersion struct {
	t *testing.T
	g *WithT
}

func (cv clusterVersion) get() *configv1.ClusterVersion {
	v := &configv1.ClusterVersion{}
	cv.g.Expect(env.Client.Get(context.Background(), client.ObjectKey{Name: "version"}, v)).To(Succeed())
	return v
}

// reset makes the cluster run version with the given update graph.
func (cv clusterVersion) reset(version string, available ...string) {
	cv.t.Helper()
	ctx := context.Background()
	v := &configv1.ClusterVersion{ObjectMeta: metav1.ObjectMeta{Name: "version"}, Spec: configv1.ClusterVersionSpec{ClusterID: "0d3c5b6e-2a3f-4e4e-9a55-5d0f3c2a1b00"}}
	if err := env.Client.Delete(ctx, v); client.IgnoreNotFound(err) != nil {
		cv.t.Fatal(err)
	}
	cv.g.Eventually(func() bool {
		return apierrors.IsNotFound(env.Client.Get(ctx, client.ObjectKeyFromObject(v), &configv1.ClusterVersion{}))
	}).Should(BeTrue())
	env.Create(cv.t, v)
	cv.setStatus(func(s *configv1.ClusterVersionStatus) {
		s.Desired = configv1.Release{Version: version, Image: digests[version]}
		s.AvailableUpdates = []configv1.Release{}
		for _, a := range available {
			s.AvailableUpdates = append(s.AvailableUpdates, configv1.Release{Version: a, Image: digests[a]})
		}
		s.History = []configv1.UpdateHistory{cv.entry(version, configv1.CompletedUpdate)}
		s.VersionHash = "hash"
	})
}

func (cv clusterVersion) entry(version string, state configv1.UpdateState) configv1.UpdateHistory {
	now := metav1.Now()
	h := configv1.UpdateHistory{State: state, Version: version, Image: digests[version], StartedTime: now, Verified: true}
	if state == configv1.CompletedUpdate {
		h.CompletionTime = &now
	}
	return h
}

func (cv clusterVersion) setStatus(change func(*configv1.ClusterVersionStatus)) {
	cv.t.Helper()
	v := &configv1.ClusterVersion{}
	cv.g.Expect(env.Update(client.ObjectKey{Name: "version"}, v, func() { change(&v.Status) }, true)).To(Succeed())
}

func TestUpgrade(t *testing.T) {
	f := newFixture(t)
	g := f.g
	cv := clusterVersion{t: t, g: g}
	cv.reset("4.17.3", "4.17.4")
	f.begin()
	f.reconcileN(2)
	f.install(hiveextv1.ClusterStateInstalled)
	f.reconcile()

	cp := f.get()
	g.Expect(cp.Status.Initialization.ControlPlaneInitialized).To(HaveValue(BeTrue()))
	g.Expect(cp.Status.DistributionVersion).To(Equal("4.17.3"))
	g.Expect(cp.Status.Version).To(Equal("v1.30.5"), "read from the release image")
	f.expectCondition(controlplanev1.UpgradeCompletedCondition, metav1.ConditionTrue, controlplanev1.UpgradeCompletedReason)
	f.expectCondition(controlplanev1.ReadyCondition, metav1.ConditionUnknown, "") // no Cluster API Machine controller reports Machine Ready
	g.Expect(cp.Status.UpToDateReplicas).To(HaveValue(BeEquivalentTo(3)))

	By(t, "asking for a release of the update graph: by version")
	f.update(func(cp *controlplanev1.OpenshiftAssistedControlPlane) { cp.Spec.DistributionVersion = "4.17.4" })
	f.reconcile()
	g.Expect(cv.get().Spec.DesiredUpdate).To(Equal(&configv1.Update{Version: "4.17.4"}))
	c := f.expectCondition(controlplanev1.UpgradeCompletedCondition, metav1.ConditionFalse, controlplanev1.UpgradeInProgressReason)
	g.Expect(c.Message).To(ContainSubstring("4.17.3 to 4.17.4"))
	cp = f.get()
	g.Expect(cp.Status.Version).To(Equal("v1.30.5"), "the oldest version runs until the update completes")
	g.Expect(cp.Status.DistributionVersion).To(Equal("4.17.3"))
	g.Expect(cp.Status.UpToDateReplicas).To(HaveValue(BeEquivalentTo(0)), "Machines are out of date while the update runs")

	By(t, "the version operator working on it")
	cv.setStatus(func(s *configv1.ClusterVersionStatus) {
		s.History = append([]configv1.UpdateHistory{cv.entry("4.17.4", configv1.PartialUpdate)}, s.History...)
		s.Conditions = []configv1.ClusterOperatorStatusCondition{{
			Type: configv1.OperatorProgressing, Status: configv1.ConditionTrue, Reason: "ClusterOperatorsUpdating",
			Message: "Working towards 4.17.4: 106 of 863 done (12% complete)", LastTransitionTime: metav1.Now(),
		}}
	})
	f.reconcile()
	c = f.expectCondition(controlplanev1.UpgradeCompletedCondition, metav1.ConditionFalse, controlplanev1.UpgradeInProgressReason)
	g.Expect(c.Message).To(ContainSubstring("Working towards 4.17.4"))

	By(t, "the version operator completing it")
	cv.setStatus(func(s *configv1.ClusterVersionStatus) {
		s.History[0] = cv.entry("4.17.4", configv1.CompletedUpdate)
		s.Desired = configv1.Release{Version: "4.17.4", Image: digests["4.17.4"]}
		s.Conditions[0].Status = configv1.ConditionFalse
	})
	f.reconcile()
	cp = f.get()
	g.Expect(cp.Status.DistributionVersion).To(Equal("4.17.4"))
	g.Expect(cp.Status.Version).To(Equal("v1.30.6"))
	f.expectCondition(controlplanev1.UpgradeCompletedCondition, metav1.ConditionTrue, controlplanev1.UpgradeCompletedReason)
	cis := &hivev1.ClusterImageSet{}
	g.Expect(env.Client.Get(context.Background(), client.ObjectKey{Name: f.ns + "-c"}, cis)).To(Succeed())
	g.Expect(cis.Spec.ReleaseImage).To(Equal(digests["4.17.4"]), "day-2 hosts get the release the cluster runs")
	f.reconcile()
	g.Expect(f.get().Status.UpToDateReplicas).To(HaveValue(BeEquivalentTo(3)))

	By(t, "asking for a release outside the update graph: by digest, forced")
	f.update(func(cp *controlplanev1.OpenshiftAssistedControlPlane) { cp.Spec.DistributionVersion = "4.18.1" })
	f.reconcile()
	g.Expect(cv.get().Spec.DesiredUpdate).To(Equal(&configv1.Update{Version: "4.18.1", Image: digests["4.18.1"], Force: true}))

	By(t, "the version operator refusing it")
	cv.setStatus(func(s *configv1.ClusterVersionStatus) {
		s.Conditions = []configv1.ClusterOperatorStatusCondition{{
			Type: "ReleaseAccepted", Status: configv1.ConditionFalse, Reason: "RetrievePayload",
			Message: "Retrieving payload failed: the image is not reachable", LastTransitionTime: metav1.Now(),
		}}
	})
	f.reconcile()
	c = f.expectCondition(controlplanev1.UpgradeCompletedCondition, metav1.ConditionFalse, controlplanev1.UpgradeFailedReason)
	g.Expect(c.Message).To(ContainSubstring("ReleaseAccepted=False (RetrievePayload): Retrieving payload failed"))
	g.Expect(f.get().Status.DistributionVersion).To(Equal("4.17.4"))
}

func TestUpgradeWorkloadUnreachable(t *testing.T) {
	f := newFixture(t)
	f.begin()
	f.install(hiveextv1.ClusterStateAddingHosts)
	f.reconcile()
	f.g.Expect(f.get().Status.DistributionVersion).To(Equal("4.17.3"))
	f.r.Workload = func(context.Context, *clusterv1Cluster) (client.Client, error) { return nil, errUnreachable }
	f.update(func(cp *controlplanev1.OpenshiftAssistedControlPlane) { cp.Spec.DistributionVersion = "4.17.4" })
	res := f.reconcile()
	c := f.expectCondition(controlplanev1.UpgradeCompletedCondition, metav1.ConditionFalse, controlplanev1.WorkloadClusterUnreachableReason)
	f.g.Expect(c.Message).To(ContainSubstring("connection refused"))
	f.g.Expect(res.RequeueAfter).NotTo(BeZero())
}
