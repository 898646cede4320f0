package upgrade

import (
	"context"
	"crypto/sha256"
	"fmt"

	bmov1alpha1 "github.com/metal3-io/baremetal-operator/apis/metal3.io/v1alpha1"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	configv1 "github.com/openshift/api/config/v1"
	machinev1beta1 "github.com/openshift/api/machine/v1beta1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/paritylab/paritylab/framework"
	"github.com/paritylab/paritylab/lab/releases"
	"github.com/paritylab/paritylab/lab/workload/cvo"
	"github.com/paritylab/paritylab/results"
	"github.com/paritylab/paritylab/scenarios"
)

// Resources both flows' recorders follow.
var (
	clusterVersions  = schema.GroupVersionResource{Group: "config.openshift.io", Version: "v1", Resource: "clusterversions"}
	clusterImageSets = schema.GroupVersionResource{Group: "hive.openshift.io", Version: "v1", Resource: "clusterimagesets"}
)

// recordUpdateObjects follows the spoke's ClusterVersion and the hub's
// ClusterImageSet of a flow (their facts are properties the steps set).
func recordUpdateObjects(ctx context.Context, in scenarios.Input, run *scenarios.Run, base *scenarios.Cluster, imageSet string, hubWatches ...framework.Watch) {
	Expect(run.Record(ctx, base.WorkloadConfig, nil,
		framework.Watch{Resource: clusterVersions, FieldSelector: "metadata.name=" + cvo.Name, Role: "cluster-version", IdentityOnly: true},
	)).To(Succeed())
	hubWatches = append(hubWatches, framework.Watch{Resource: clusterImageSets, FieldSelector: "metadata.name=" + imageSet, Role: "cluster-image-set", IdentityOnly: true})
	Expect(run.Record(ctx, in.Lab.Hub.GetRESTConfig(), nil, hubWatches...)).To(Succeed())
}

// classicSide updates a ZTP-installed cluster the classic way: an admin
// sets the spoke's ClusterVersion spec.desiredUpdate. A cluster with no
// update service has no available updates, so the admin names the release
// image by digest, which is what `oc adm upgrade --to-image=<digest>
// --allow-explicit-upgrade` writes (image only, not forced).
type classicSide struct {
	in           scenarios.Input
	run          *scenarios.Run
	base         *scenarios.Cluster
	missingImage string
}

func newClassicSide(ctx context.Context, in scenarios.Input, run *scenarios.Run, base *scenarios.Cluster) *classicSide {
	Expect(base.ZTP).NotTo(BeNil(), "the MAPI day-1 cluster is a ZTP site")
	recordUpdateObjects(ctx, in, run, base, base.ZTP.ImageSetName())
	return &classicSide{in: in, run: run, base: base}
}

func (s *classicSide) setDesiredUpdate(ctx context.Context, u configv1.Update) {
	cv := &configv1.ClusterVersion{}
	Expect(s.base.Workload.Get(ctx, client.ObjectKey{Name: cvo.Name}, cv)).To(Succeed())
	before := cv.DeepCopy()
	cv.Spec.DesiredUpdate = &u
	Expect(s.base.Workload.Patch(ctx, cv, client.MergeFrom(before))).To(Succeed())
}

func (s *classicSide) requestUpdate(ctx context.Context, rel releases.Pushed) {
	By("setting the spoke's ClusterVersion desiredUpdate to the image of " + rel.Version + " by digest")
	s.setDesiredUpdate(ctx, configv1.Update{Image: rel.Image})
}

// requestMissing names a digest the registry does not have, as an admin
// who copied a wrong one would.
func (s *classicSide) requestMissing(ctx context.Context, version string) {
	s.missingImage = fmt.Sprintf("%s@sha256:%x", s.in.Lab.Info.ReleaseRepository, sha256.Sum256([]byte("openshift "+version)))
	By("setting the spoke's ClusterVersion desiredUpdate to an image of " + version + " by a digest the registry does not have")
	s.setDesiredUpdate(ctx, configv1.Update{Image: s.missingImage})
}

func (s *classicSide) missingReported(ctx context.Context, g Gomega) string {
	cv := &configv1.ClusterVersion{}
	g.Expect(s.base.Workload.Get(ctx, client.ObjectKey{Name: cvo.Name}, cv)).To(Succeed())
	c := cvo.FindCondition(cv.Status.Conditions, cvo.ConditionReleaseAccepted)
	g.Expect(c).NotTo(BeNil(), "ClusterVersion ReleaseAccepted")
	g.Expect(c.Status).To(Equal(configv1.ConditionFalse), "ClusterVersion ReleaseAccepted")
	g.Expect(c.Message).To(ContainSubstring(s.missingImage))
	return "ClusterVersion ReleaseAccepted=False/" + c.Reason
}

func (s *classicSide) withdraw(ctx context.Context, running releases.Pushed) {
	s.requestUpdate(ctx, running)
	iv := interval(s.in, "wait-upgrade")
	Eventually(func(g Gomega) {
		cv := &configv1.ClusterVersion{}
		g.Expect(s.base.Workload.Get(ctx, client.ObjectKey{Name: cvo.Name}, cv)).To(Succeed())
		g.Expect(cv.Status.ObservedGeneration).To(Equal(cv.Generation))
		c := cvo.FindCondition(cv.Status.Conditions, cvo.ConditionReleaseAccepted)
		g.Expect(c).NotTo(BeNil())
		g.Expect(c.Status).To(Equal(configv1.ConditionTrue), "ClusterVersion ReleaseAccepted")
	}).WithContext(ctx).WithTimeout(iv.Timeout).WithPolling(iv.Polling).Should(Succeed())
}

// completed: the spoke's history has the version Completed on top.
func (s *classicSide) completed(ctx context.Context, g Gomega, version string) {
	expectHistoryCompleted(ctx, g, s.base.Workload, version)
}

func expectHistoryCompleted(ctx context.Context, g Gomega, spoke client.Client, version string) {
	cv := &configv1.ClusterVersion{}
	g.Expect(spoke.Get(ctx, client.ObjectKey{Name: cvo.Name}, cv)).To(Succeed())
	g.Expect(cv.Status.History).NotTo(BeEmpty())
	g.Expect(cv.Status.History[0].Version).To(Equal(version), "newest ClusterVersion history entry")
	g.Expect(cv.Status.History[0].State).To(Equal(configv1.CompletedUpdate), "ClusterVersion history entry of %s", version)
}

// inventory: the spoke's Machines and BareMetalHosts, where the machine
// API keeps them.
func (s *classicSide) inventory(ctx context.Context) map[types.UID]string {
	out := map[types.UID]string{}
	machines := &machinev1beta1.MachineList{}
	Expect(s.base.Workload.List(ctx, machines, client.InNamespace(scenarios.MachineAPINamespace))).To(Succeed())
	for _, m := range machines.Items {
		out[m.UID] = "Machine/" + m.Name
	}
	hosts := &bmov1alpha1.BareMetalHostList{}
	Expect(s.base.Workload.List(ctx, hosts, client.InNamespace(scenarios.MachineAPINamespace))).To(Succeed())
	for _, h := range hosts.Items {
		out[h.UID] = "BareMetalHost/" + h.Name
	}
	return out
}

func (s *classicSide) imageSetName() string { return s.base.ZTP.ImageSetName() }

// addWorker is ZTP day 2: a BareMetalHost labelled with the site's
// InfraEnv; the host installs the release of the site's ClusterImageSet.
func (s *classicSide) addWorker(ctx context.Context, ready func()) string {
	scenarios.AddZTPDay2Worker(ctx, scenarios.ZTPDay2WorkerInput{Hosts: s.in.Hosts, Hub: s.in.Lab.Client(), Spoke: s.base.Workload,
		Site: *s.base.ZTP, Name: day2HostName, Interval: interval(s.in, "wait-machines-running"), Ready: ready})
	return day2HostName
}

func (s *classicSide) finish(ctx context.Context, failed bool, why string) *results.Observation {
	in := scenarios.FinishInput{Failed: failed, Err: why, Workload: s.base.Workload, WorkloadConfig: s.base.WorkloadConfig,
		NodeNames: []string{day2HostName}, AgentNamespace: s.base.Namespace}
	return s.run.Finish(ctx, s.in.Lab, in)
}
