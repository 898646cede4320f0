package disconnected

import (
	"context"
	"fmt"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	configv1 "github.com/openshift/api/config/v1"
	hivev1 "github.com/openshift/hive/apis/hive/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/paritylab/paritylab/framework"
	"github.com/paritylab/paritylab/lab/workload/cvo"
	agentv1beta1 "github.com/paritylab/paritylab/providers/thirdparty/agentinstall/v1beta1"
	"github.com/paritylab/paritylab/scenarios"
)

var (
	clusterVersions  = schema.GroupVersionResource{Group: "config.openshift.io", Version: "v1", Resource: "clusterversions"}
	clusterImageSets = schema.GroupVersionResource{Group: "hive.openshift.io", Version: "v1", Resource: "clusterimagesets"}
)

// side is what differs between the flows.
type side interface {
	// misconfigured writes an install of the source's release while the
	// hub has no mirrors, waits for the flow to report the failure and
	// says how it did.
	misconfigured(ctx context.Context) string
	// byTag asks for the source's release by tag, as the flow's user
	// can, on the hub with mirrors, and says what the flow made of it;
	// empty when the flow's user cannot name a tag (tagOutcome).
	byTag(ctx context.Context) string
	// install writes the cluster's manifests and claims its hosts; the
	// cluster's namespace is namespace() from then on.
	install(ctx context.Context)
	namespace() string
	// kubeconfig is the cluster's published admin kubeconfig.
	kubeconfig(ctx context.Context) ([]byte, error)
	// installFailed fails g when the flow reports the install failed.
	installFailed(ctx context.Context, g Gomega)
	imageSetName() string
	// addWorker adds one worker the flow's day-2 way, waits for its Node
	// to be Ready and returns the Node's name.
	addWorker(ctx context.Context, spoke client.Client) string
	// update asks for the update to updateVersion; completed checks the
	// flow reports it done.
	update(ctx context.Context, spoke client.Client)
	completed(ctx context.Context, g Gomega, spoke client.Client)
}

// steps runs the scenario for one flow and keeps its facts, set at the
// end as properties of the spoke's ClusterVersion (keys
// "<sub-case>.<fact>").
type steps struct {
	in       scenarios.Input
	run      *scenarios.Run
	side     side
	facts    map[string]string
	spoke    client.Client
	spokeCfg *rest.Config
	// sourceBefore is how many requests the source had answered before
	// the flow began.
	sourceBefore int
}

func (st *steps) all(ctx context.Context) {
	st.sourceBefore = len(sourceRequests(st.in))
	removeHubMirrors(ctx, st.in)
	By("sub-case misconfigured: the source's release on a hub without mirrors")
	st.facts["misconfigured.reported"] = st.side.misconfigured(ctx)
	configureHubMirrors(ctx, st.in)
	By("sub-case tag: the source's release by tag on the hub with mirrors")
	st.facts["tag.outcome"] = st.side.byTag(ctx)

	st.side.install(ctx)
	st.run.SetCluster(st.side.namespace())
	Expect(st.run.Record(ctx, st.in.Lab.Hub.GetRESTConfig(), nil,
		framework.Watch{Resource: clusterImageSets, FieldSelector: "metadata.name=" + st.side.imageSetName(), Role: "cluster-image-set", IdentityOnly: true})).To(Succeed())
	st.waitAgents(ctx)
	st.run.Reach(milestoneAgents)
	st.waitKubeconfig(ctx)
	st.run.Reach(milestoneKubeconfig)
	Expect(st.run.Record(ctx, st.spokeCfg, nil, scenarios.NodeIdentities,
		framework.Watch{Resource: clusterVersions, FieldSelector: "metadata.name=" + cvo.Name, Role: "cluster-version", IdentityOnly: true})).To(Succeed())
	st.waitNodes(ctx, controlPlaneReplicas)
	st.run.Reach(milestoneNodes)
	st.facts["day1.imageSet"] = st.imageSet(ctx)
	if st.facts["tag.outcome"] == "" {
		st.facts["tag.outcome"] = st.tagOutcome(ctx)
	}
	st.facts["day1.history[0]"] = st.history(ctx)

	By("adding a day-2 worker")
	st.side.addWorker(ctx, st.spoke)
	st.run.Reach(milestoneWorker)

	By("updating the cluster to " + updateVersion)
	st.side.update(ctx, st.spoke)
	iv := interval(st.in, "wait-upgrade")
	Eventually(func(g Gomega) { st.side.completed(ctx, g, st.spoke) }).WithContext(ctx).WithTimeout(iv.Timeout).WithPolling(iv.Polling).Should(Succeed())
	st.run.Reach(milestoneUpdated)
	st.facts["update.history[0]"] = st.history(ctx)
	st.facts["update.imageSet"] = st.imageSet(ctx)

	By("checking the source registry answered nothing during the flow")
	Expect(sourceRequests(st.in)[st.sourceBefore:]).To(BeEmpty(), "requests the disconnected site's source registry answered")
}

func (st *steps) waitAgents(ctx context.Context) {
	scenarios.WaitControlPlaneAgents(ctx, scenarios.WaitAgentsInput{Hub: st.in.Lab.Client(), Namespace: st.side.namespace(),
		Count: controlPlaneReplicas, Interval: interval(st.in, "wait-agents-registered")})
}

func (st *steps) waitKubeconfig(ctx context.Context) {
	By("waiting for the install to publish a usable admin kubeconfig")
	iv := interval(st.in, "wait-install")
	var raw []byte
	Eventually(func(g Gomega) {
		st.side.installFailed(ctx, g)
		var err error
		raw, err = st.side.kubeconfig(ctx)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(scenarios.KubeconfigUsable(ctx, raw, st.in.Lab.Scheme())).To(Succeed())
	}).WithContext(ctx).WithTimeout(iv.Timeout).WithPolling(iv.Polling).Should(Succeed())
	cfg, err := clientcmd.RESTConfigFromKubeConfig(raw)
	Expect(err).NotTo(HaveOccurred())
	st.spokeCfg = cfg
	st.spoke, err = client.New(cfg, client.Options{Scheme: st.in.Lab.Scheme()})
	Expect(err).NotTo(HaveOccurred())
}

func (st *steps) waitNodes(ctx context.Context, n int) {
	By(fmt.Sprintf("waiting for %d Nodes Ready", n))
	iv := interval(st.in, "wait-nodes-ready")
	Eventually(func(g Gomega) {
		g.Expect(st.readyNodes(ctx, g)).To(HaveLen(n))
	}).WithContext(ctx).WithTimeout(iv.Timeout).WithPolling(iv.Polling).Should(Succeed())
}

func (st *steps) readyNodes(ctx context.Context, g Gomega) []string {
	nodes := &corev1.NodeList{}
	g.Expect(st.spoke.List(ctx, nodes)).To(Succeed())
	var out []string
	for i := range nodes.Items {
		if scenarios.NodeReady(&nodes.Items[i]) {
			out = append(out, nodes.Items[i].Name)
		}
	}
	return out
}

// imageSet describes the release the flow's ClusterImageSet names.
func (st *steps) imageSet(ctx context.Context) string {
	cis := &hivev1.ClusterImageSet{}
	Expect(st.in.Lab.Client().Get(ctx, client.ObjectKey{Name: st.side.imageSetName()}, cis)).To(Succeed())
	return describeImage(st.in, cis.Spec.ReleaseImage)
}

// tagOutcome is what became of a release tag the flow read on the hub:
// the ClusterImageSet it wrote names the release by digest, or by tag (the
// ACM-33187 bug: a tag the mirrors do not serve to the hosts).
func (st *steps) tagOutcome(ctx context.Context) string {
	cis := &hivev1.ClusterImageSet{}
	Expect(st.in.Lab.Client().Get(ctx, client.ObjectKey{Name: st.side.imageSetName()}, cis)).To(Succeed())
	if strings.Contains(cis.Spec.ReleaseImage, "@sha256:") {
		return "the release tag read on the hub; ClusterImageSet written by digest"
	}
	return "the release tag read on the hub; ClusterImageSet written by tag"
}

// history describes the newest entry of the spoke's ClusterVersion
// history: version, state and which image.
func (st *steps) history(ctx context.Context) string {
	cv := &configv1.ClusterVersion{}
	Expect(st.spoke.Get(ctx, client.ObjectKey{Name: cvo.Name}, cv)).To(Succeed())
	if len(cv.Status.History) == 0 {
		return "none"
	}
	h := cv.Status.History[0]
	return fmt.Sprintf("%s %s verified=%t image=%s", h.Version, h.State, h.Verified, describeImage(st.in, h.Image))
}

// recordFacts sets the flow's facts on the spoke's ClusterVersion, with
// what the discovery images carried, what the install left in the spoke
// and what the hosts pulled from the mirror; nothing when the flow never
// reached its cluster.
func (st *steps) recordFacts(ctx context.Context) {
	if st.spoke == nil {
		return
	}
	cv := &configv1.ClusterVersion{}
	if err := st.spoke.Get(ctx, client.ObjectKey{Name: cvo.Name}, cv); err != nil {
		return
	}
	facts := map[string]string{}
	for k, v := range st.facts {
		facts[k] = v
	}
	for k, v := range describeSpokeMirrors(ctx, st.in, st.spoke) {
		facts[k] = v
	}
	facts["discovery.mirrors"] = discoveryMirrors(ctx, st.in, st.side.namespace())
	facts["pulls.hosts"] = agentPulls(st.in, st.hostIDs(ctx))
	facts["pulls.source"] = fmt.Sprintf("%d requests", len(sourceRequests(st.in))-st.sourceBefore)
	for k, v := range facts {
		st.run.SetProperty(cv.UID, k, v)
	}
}

// hostIDs are the flow's agents' host IDs (an Agent is named by its
// host's ID).
func (st *steps) hostIDs(ctx context.Context) []string {
	agents := &agentv1beta1.AgentList{}
	Expect(st.in.Lab.Client().List(ctx, agents, client.InNamespace(st.side.namespace()))).To(Succeed())
	var out []string
	for _, a := range agents.Items {
		out = append(out, a.Name)
	}
	return out
}

// finishInput is what the flow's observation compares: the spoke's Nodes.
// Hosts and machines are the day1 and day2-scale scenarios' subject; this
// one compares what the mirrors changed.
func (st *steps) finishInput(failed bool, why string) scenarios.FinishInput {
	return scenarios.FinishInput{Failed: failed, Err: why, Workload: st.spoke, WorkloadConfig: st.spokeCfg, AgentNamespace: st.side.namespace()}
}
