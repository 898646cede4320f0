package openshiftassistedcontrolplane_test

import (
	"context"
	"sync"
	"testing"

	. "github.com/onsi/gomega"
	configv1 "github.com/openshift/api/config/v1"
	hivev1 "github.com/openshift/hive/apis/hive/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/cluster-api/util/conditions"

	controlplanev1 "github.com/paritylab/paritylab/providers/controlplane/api/v1alpha3"
	hiveextv1 "github.com/paritylab/paritylab/providers/thirdparty/hiveextensions/v1beta1"
)

// clusterVersion plays the workload cluster's version operator: the
// ClusterVersion "version" of the API server (there is one per cluster, so
// one test at a time has it).
type clusterVersion struct {
	t *testing.T
	g *WithT
}

// clusterVersionLock is held by the test that has the ClusterVersion.
var clusterVersionLock sync.Mutex

// lockClusterVersion hands the ClusterVersion to the test until it ends.
// Call it after newFixture, which makes the test parallel.
func lockClusterVersion(t *testing.T, g *WithT) clusterVersion {
	clusterVersionLock.Lock()
	t.Cleanup(clusterVersionLock.Unlock)
	return clusterVersion{t: t, g: g}
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

// observe changes the status as the version operator does once it has
// read the spec: with status.observedGeneration caught up.
func (cv clusterVersion) observe(change func(*configv1.ClusterVersionStatus)) {
	cv.t.Helper()
	v := &configv1.ClusterVersion{}
	cv.g.Expect(env.Update(client.ObjectKey{Name: "version"}, v, func() {
		v.Status.ObservedGeneration = v.Generation
		change(&v.Status)
	}, true)).To(Succeed())
}

// condition is a ClusterVersion condition as the version operator sets it.
func condition(t configv1.ClusterStatusConditionType, status configv1.ConditionStatus, reason, msg string) configv1.ClusterOperatorStatusCondition {
	return configv1.ClusterOperatorStatusCondition{Type: t, Status: status, Reason: reason, Message: msg, LastTransitionTime: metav1.Now()}
}

// installed begins the fixture and installs the cluster: it runs 4.17.3,
// on three up-to-date Machines.
func (f *fixture) installed() {
	f.t.Helper()
	f.begin()
	f.reconcileN(2)
	f.install(hiveextv1.ClusterStateInstalled)
	f.reconcile()
	cp := f.get()
	f.g.Expect(cp.Status.DistributionVersion).To(Equal("4.17.3"))
	f.g.Expect(cp.Status.UpToDateReplicas).To(HaveValue(BeEquivalentTo(3)))
}

// setVersion sets spec.distributionVersion.
func (f *fixture) setVersion(v string) {
	f.t.Helper()
	f.update(func(cp *controlplanev1.OpenshiftAssistedControlPlane) { cp.Spec.DistributionVersion = v })
}

// expectNoUpdateRequested expects both upgrade conditions to say the
// cluster runs version and nothing more is asked for.
func (f *fixture) expectNoUpdateRequested(version string) {
	f.t.Helper()
	c := f.expectCondition(controlplanev1.UpgradeAvailableCondition, metav1.ConditionTrue, controlplanev1.UpgradeAvailableReason)
	f.g.Expect(c.Message).To(Equal("no update requested: the cluster runs " + version))
	c = f.expectCondition(controlplanev1.UpgradeCompletedCondition, metav1.ConditionTrue, controlplanev1.UpgradeCompletedReason)
	f.g.Expect(c.Message).To(Equal("the cluster runs OpenShift " + version))
}

func TestUpgrade(t *testing.T) {
	f := newFixture(t)
	g := f.g
	cv := lockClusterVersion(t, g)
	cv.reset("4.17.3", "4.17.4")
	f.begin()
	f.reconcileN(2)
	f.install(hiveextv1.ClusterStateInstalled)
	f.reconcile()

	cp := f.get()
	g.Expect(cp.Status.Initialization.ControlPlaneInitialized).To(HaveValue(BeTrue()))
	g.Expect(cp.Status.DistributionVersion).To(Equal("4.17.3"))
	g.Expect(cp.Status.Version).To(Equal("v1.30.5"), "read from the release image")
	f.expectNoUpdateRequested("4.17.3")
	f.expectCondition(controlplanev1.ReadyCondition, metav1.ConditionUnknown, "") // no Cluster API Machine controller reports Machine Ready
	g.Expect(cp.Status.UpToDateReplicas).To(HaveValue(BeEquivalentTo(3)))

	By(t, "asking for a release of a repository other than the default one: by digest, forced, as CAPOA does")
	f.update(func(cp *controlplanev1.OpenshiftAssistedControlPlane) { cp.Spec.DistributionVersion = "4.17.4" })
	f.reconcile()
	g.Expect(cv.get().Spec.DesiredUpdate).To(Equal(&configv1.Update{Image: digests["4.17.4"], Force: true}))
	c := f.expectCondition(controlplanev1.UpgradeCompletedCondition, metav1.ConditionFalse, controlplanev1.UpgradeInProgressReason)
	g.Expect(c.Message).To(Equal("requested the update from 4.17.3 to 4.17.4; waiting for the cluster version operator"))
	c = f.expectCondition(controlplanev1.UpgradeAvailableCondition, metav1.ConditionTrue, controlplanev1.UpgradeAvailableReason)
	g.Expect(c.Message).To(Equal("OpenShift 4.17.4 is available: release image " + digests["4.17.4"]))
	cp = f.get()
	g.Expect(cp.Status.Version).To(Equal("v1.30.5"), "the oldest version runs until the update completes")
	g.Expect(cp.Status.DistributionVersion).To(Equal("4.17.3"))
	g.Expect(cp.Status.UpToDateReplicas).To(HaveValue(BeEquivalentTo(0)), "Machines are out of date while the update runs")

	By(t, "the version operator working on it")
	cv.observe(func(s *configv1.ClusterVersionStatus) {
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
	cv.observe(func(s *configv1.ClusterVersionStatus) {
		s.History[0] = cv.entry("4.17.4", configv1.CompletedUpdate)
		s.Desired = configv1.Release{Version: "4.17.4", Image: digests["4.17.4"]}
		s.Conditions[0].Status = configv1.ConditionFalse
	})
	f.reconcile()
	cp = f.get()
	g.Expect(cp.Status.DistributionVersion).To(Equal("4.17.4"))
	g.Expect(cp.Status.Version).To(Equal("v1.30.6"))
	f.expectNoUpdateRequested("4.17.4")
	cis := &hivev1.ClusterImageSet{}
	g.Expect(env.Client.Get(context.Background(), client.ObjectKey{Name: f.ns + "-c"}, cis)).To(Succeed())
	g.Expect(cis.Spec.ReleaseImage).To(Equal(digests["4.17.4"]), "day-2 hosts get the release the cluster runs")
	f.reconcile()
	g.Expect(f.get().Status.UpToDateReplicas).To(HaveValue(BeEquivalentTo(3)))

	By(t, "asking for a release outside the update graph: by digest, forced")
	f.update(func(cp *controlplanev1.OpenshiftAssistedControlPlane) { cp.Spec.DistributionVersion = "4.18.1" })
	f.reconcile()
	g.Expect(cv.get().Spec.DesiredUpdate).To(Equal(&configv1.Update{Image: digests["4.18.1"], Force: true}))

	By(t, "the version operator refusing it")
	cv.observe(func(s *configv1.ClusterVersionStatus) {
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
	f.expectCondition(controlplanev1.UpgradeAvailableCondition, metav1.ConditionTrue, controlplanev1.UpgradeAvailableReason)
}

// A version whose release the registry does not serve is not asked of the
// cluster: the conditions say what to fix, the Machines keep being
// reconciled, and fixing the version lets the update go.
func TestUpgradeImageUnavailable(t *testing.T) {
	f := newFixture(t)
	g := f.g
	cv := lockClusterVersion(t, g)
	cv.reset("4.17.3", "4.17.4")
	f.installed()
	f.expectNoUpdateRequested("4.17.3")

	By(t, "asking for a version the registry lacks")
	f.setVersion("4.17.9")
	image := registry.Host() + "/" + releaseRepository + ":4.17.9-x86_64"
	for range 2 {
		var res ctrl.Result
		g.Expect(func() { res = f.reconcile() }).NotTo(Panic())
		g.Expect(res.RequeueAfter).NotTo(BeZero(), "the registry is asked again")
	}
	c := f.expectCondition(controlplanev1.UpgradeAvailableCondition, metav1.ConditionFalse, controlplanev1.UpgradeImageUnavailableReason)
	g.Expect(c.Message).To(HavePrefix("cannot read the release image " + image + " of OpenShift 4.17.9: read release image " + image))
	g.Expect(c.Message).To(HaveSuffix("; set spec.distributionVersion to a release the registry serves"))
	c = f.expectCondition(controlplanev1.UpgradeCompletedCondition, metav1.ConditionFalse, controlplanev1.UpgradeImageUnavailableReason)
	g.Expect(c.Message).To(HavePrefix("cannot update from 4.17.3 to 4.17.9: cannot read the release image " + image))
	g.Expect(c.Message).To(HaveSuffix("set spec.distributionVersion to a release the registry serves"))
	g.Expect(cv.get().Spec.DesiredUpdate).To(BeNil(), "the cluster is not asked for a release the registry does not serve")
	cp := f.get()
	g.Expect(cp.Status.DistributionVersion).To(Equal("4.17.3"))
	g.Expect(cp.Status.Version).To(Equal("v1.30.5"), "the Kubernetes version of the release the cluster runs")

	By(t, "the Machines still reconciled")
	g.Expect(cp.Status.Replicas).To(HaveValue(BeEquivalentTo(3)))
	g.Expect(cp.Status.UpToDateReplicas).To(HaveValue(BeEquivalentTo(0)), "the Machines do not run the version asked for")
	f.expectCondition(controlplanev1.MachinesCreatedCondition, metav1.ConditionTrue, controlplanev1.MachinesCreatedReason)
	m := f.machines()[0]
	g.Expect(conditions.Get(&m, clusterv1.MachineUpToDateCondition).Message).To(ContainSubstring("whose release image cannot be read"))

	By(t, "fixing the version: the update goes")
	f.setVersion("4.17.4")
	f.reconcile()
	c = f.expectCondition(controlplanev1.UpgradeAvailableCondition, metav1.ConditionTrue, controlplanev1.UpgradeAvailableReason)
	g.Expect(c.Message).To(Equal("OpenShift 4.17.4 is available: release image " + digests["4.17.4"]))
	g.Expect(cv.get().Spec.DesiredUpdate).To(Equal(&configv1.Update{Image: digests["4.17.4"], Force: true}))
	f.expectCondition(controlplanev1.UpgradeCompletedCondition, metav1.ConditionFalse, controlplanev1.UpgradeInProgressReason)
	cv.observe(func(s *configv1.ClusterVersionStatus) {
		s.Desired = configv1.Release{Version: "4.17.4", Image: digests["4.17.4"]}
		s.History = append([]configv1.UpdateHistory{cv.entry("4.17.4", configv1.CompletedUpdate)}, s.History...)
	})
	f.reconcile()
	f.expectNoUpdateRequested("4.17.4")
	g.Expect(f.get().Status.DistributionVersion).To(Equal("4.17.4"))
}

// Right after a new desiredUpdate, the ClusterVersion still shows what the
// operator said of the previous request: that is no failure of this one.
// The operator's word on this request counts once it has observed it.
func TestUpgradeEarlierRefusalNotCarriedOver(t *testing.T) {
	f := newFixture(t)
	g := f.g
	cv := lockClusterVersion(t, g)
	cv.reset("4.17.3", "4.17.4")
	f.installed()

	By(t, "the version operator refusing 4.18.1")
	f.setVersion("4.18.1")
	f.reconcile()
	g.Expect(cv.get().Spec.DesiredUpdate).To(Equal(&configv1.Update{Image: digests["4.18.1"], Force: true}))
	cv.observe(func(s *configv1.ClusterVersionStatus) {
		s.Conditions = []configv1.ClusterOperatorStatusCondition{
			condition("ReleaseAccepted", configv1.ConditionFalse, "RetrievePayload", "Retrieving payload failed version=\"4.18.1\""),
		}
	})
	f.reconcile()
	c := f.expectCondition(controlplanev1.UpgradeCompletedCondition, metav1.ConditionFalse, controlplanev1.UpgradeFailedReason)
	g.Expect(c.Message).To(ContainSubstring("4.18.1"))

	By(t, "asking for 4.17.4 instead: the operator has not observed it yet")
	f.setVersion("4.17.4")
	for range 2 {
		f.reconcile()
		v := cv.get()
		g.Expect(v.Spec.DesiredUpdate).To(Equal(&configv1.Update{Image: digests["4.17.4"], Force: true}))
		g.Expect(v.Status.ObservedGeneration).To(BeNumerically("<", v.Generation))
		c = f.expectCondition(controlplanev1.UpgradeCompletedCondition, metav1.ConditionFalse, controlplanev1.UpgradeInProgressReason)
		g.Expect(c.Message).To(Equal("requested the update from 4.17.3 to 4.17.4; waiting for the cluster version operator"))
	}

	By(t, "the operator observing it and refusing it too")
	cv.observe(func(s *configv1.ClusterVersionStatus) {
		s.Conditions = []configv1.ClusterOperatorStatusCondition{
			condition("ReleaseAccepted", configv1.ConditionFalse, "VerifyPayload", "Verifying payload failed version=\"4.17.4\""),
		}
	})
	f.reconcile()
	c = f.expectCondition(controlplanev1.UpgradeCompletedCondition, metav1.ConditionFalse, controlplanev1.UpgradeFailedReason)
	g.Expect(c.Message).To(Equal(`the cluster version operator reports ReleaseAccepted=False (VerifyPayload): Verifying payload failed version="4.17.4"`))

	By(t, "the refusal clearing: the operator updates")
	cv.observe(func(s *configv1.ClusterVersionStatus) {
		s.Desired = configv1.Release{Version: "4.17.4", Image: digests["4.17.4"]}
		s.History = append([]configv1.UpdateHistory{cv.entry("4.17.4", configv1.PartialUpdate)}, s.History...)
		s.Conditions = []configv1.ClusterOperatorStatusCondition{
			condition("ReleaseAccepted", configv1.ConditionTrue, "PayloadLoaded", "Payload loaded version=\"4.17.4\""),
			condition(configv1.OperatorProgressing, configv1.ConditionTrue, "ClusterOperatorsUpdating", "Working towards 4.17.4: 10 of 863 done (1% complete)"),
		}
	})
	f.reconcile()
	c = f.expectCondition(controlplanev1.UpgradeCompletedCondition, metav1.ConditionFalse, controlplanev1.UpgradeInProgressReason)
	g.Expect(c.Message).To(Equal("updating from 4.17.3 to 4.17.4: Working towards 4.17.4: 10 of 863 done (1% complete)"))
	cv.observe(func(s *configv1.ClusterVersionStatus) {
		s.History[0] = cv.entry("4.17.4", configv1.CompletedUpdate)
		s.Conditions[1].Status = configv1.ConditionFalse
	})
	f.reconcile()
	f.expectNoUpdateRequested("4.17.4")
}

// Set back to the version the cluster runs, the control plane asks for
// nothing more; the ClusterVersion's desiredUpdate of the abandoned
// release is left as it is.
func TestUpgradeTakenBack(t *testing.T) {
	f := newFixture(t)
	g := f.g
	cv := lockClusterVersion(t, g)
	cv.reset("4.17.3")
	f.installed()
	f.setVersion("4.18.1")
	f.reconcile()
	abandoned := &configv1.Update{Image: digests["4.18.1"], Force: true}
	g.Expect(cv.get().Spec.DesiredUpdate).To(Equal(abandoned))
	cv.observe(func(s *configv1.ClusterVersionStatus) {
		s.Conditions = []configv1.ClusterOperatorStatusCondition{
			condition("ReleaseAccepted", configv1.ConditionFalse, "RetrievePayload", "Retrieving payload failed"),
		}
	})
	f.reconcile()
	f.expectCondition(controlplanev1.UpgradeCompletedCondition, metav1.ConditionFalse, controlplanev1.UpgradeFailedReason)

	By(t, "setting the installed version back")
	f.setVersion("4.17.3")
	f.reconcileN(2)
	f.expectNoUpdateRequested("4.17.3")
	g.Expect(cv.get().Spec.DesiredUpdate).To(Equal(abandoned), "the ClusterVersion is left alone")
	cp := f.get()
	g.Expect(cp.Status.DistributionVersion).To(Equal("4.17.3"))
	g.Expect(cp.Status.UpToDateReplicas).To(HaveValue(BeEquivalentTo(3)))
}
