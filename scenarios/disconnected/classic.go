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
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/paritylab/paritylab/framework"
	"github.com/paritylab/paritylab/lab/workload/cvo"
	hiveextv1beta1 "github.com/paritylab/paritylab/providers/thirdparty/hiveextensions/v1beta1"
	"github.com/paritylab/paritylab/scenarios"
)

// pullSecret is a test-only pull secret for a registry that does not
// exist.
const pullSecret = `{"auths":{"registry.example":{"auth":"dXNlcjpwYXNz"}}}`

// day2HostName is the MAPI flow's day-2 worker; its Node takes the name.
const day2HostName = "disconnected-day2-0"

// classicSide is ZTP on a disconnected hub: the ClusterImageSet names the
// release in its source by digest, as oc-mirror's output and the ZTP
// documentation have users write it; the hub's mirrors do the rest.
type classicSide struct {
	in   scenarios.Input
	run  *scenarios.Run
	site scenarios.ZTPSite
}

// ztpSite is a ZTP site of the scenario in a new namespace, installing
// image; the site's objects are written.
func (s *classicSide) ztpSite(ctx context.Context, prefix, image string) scenarios.ZTPSite {
	hub := s.in.Lab.Client()
	ns, err := framework.CreateNamespace(ctx, hub, prefix)
	Expect(err).NotTo(HaveOccurred())
	site := scenarios.ZTPSite{Namespace: ns.Name, Name: ns.Name, ControlPlane: controlPlaneReplicas,
		Version: installedVersion, ReleaseImage: image, PullSecret: pullSecret, SSHKey: s.in.SSHKey, Network: scenarios.LabSiteNetwork}
	By("writing the ZTP manifests of " + ns.Name + ": ClusterImageSet " + describeImage(s.in, image))
	for _, o := range site.Manifests() {
		Expect(hub.Create(ctx, o)).To(Succeed(), "create %T %s", o, o.GetName())
	}
	return site
}

// backendError waits for the site's AgentClusterInstall to report the
// release unreadable (SpecSynced=False/BackendError) and returns its
// message; the site is removed after.
func (s *classicSide) backendError(ctx context.Context, site scenarios.ZTPSite) string {
	hub := s.in.Lab.Client()
	defer func() {
		Expect(client.IgnoreNotFound(hub.Delete(ctx, &hivev1.ClusterImageSet{ObjectMeta: metav1Named(site.ImageSetName())}))).To(Succeed())
		Expect(client.IgnoreNotFound(hub.Delete(ctx, &corev1.Namespace{ObjectMeta: metav1Named(site.Namespace)}))).To(Succeed())
	}()
	var msg string
	iv := interval(s.in, "wait-object")
	Eventually(func(g Gomega) {
		aci := &hiveextv1beta1.AgentClusterInstall{}
		g.Expect(hub.Get(ctx, client.ObjectKey{Namespace: site.Namespace, Name: site.Name}, aci)).To(Succeed())
		var c *hivev1.ClusterInstallCondition
		for i := range aci.Status.Conditions {
			if aci.Status.Conditions[i].Type == hiveextv1beta1.ConditionSpecSynced {
				c = &aci.Status.Conditions[i]
			}
		}
		g.Expect(c).NotTo(BeNil(), "AgentClusterInstall SpecSynced")
		g.Expect(c.Status).To(Equal(corev1.ConditionFalse), "AgentClusterInstall SpecSynced: %s", c.Message)
		g.Expect(c.Reason).To(Equal("BackendError"))
		g.Expect(aci.Status.DebugInfo.State).To(BeEmpty(), "no install state")
		msg = c.Message
	}).WithContext(ctx).WithTimeout(iv.Timeout).WithPolling(iv.Polling).Should(Succeed())
	return msg
}

func (s *classicSide) misconfigured(ctx context.Context) string {
	rel := published(s.in, installedVersion)
	msg := s.backendError(ctx, s.ztpSite(ctx, "disconnected-mapi-nomirror", rel.Image))
	Expect(msg).To(ContainSubstring("failed to get release image '"+rel.Image+"'"), "the cause names the release")
	Expect(msg).To(ContainSubstring("no route to host"), "the cause says the source is out of reach")
	return "AgentClusterInstall SpecSynced=False/BackendError: failed to get release image (no route to host)"
}

func (s *classicSide) byTag(ctx context.Context) string {
	rel := published(s.in, installedVersion)
	msg := s.backendError(ctx, s.ztpSite(ctx, "disconnected-mapi-tag", rel.Tag))
	Expect(msg).To(ContainSubstring("this is usually unsupported in combination with mirror registries, try providing a digest-based image instead"))
	return "AgentClusterInstall SpecSynced=False/BackendError: failed to get release image, use a digest with mirror registries"
}

func (s *classicSide) install(ctx context.Context) {
	s.site = s.ztpSite(ctx, "disconnected-mapi", published(s.in, installedVersion).Image)
	By("adding the control-plane hosts to the InfraEnv as BareMetalHosts")
	var claims []framework.HostClaim
	for i := range controlPlaneReplicas {
		claims = append(claims, s.site.HostClaim(fmt.Sprintf("disconnected-master-%d", i), "master"))
	}
	_, err := s.in.Hosts.Claim(ctx, claims...)
	Expect(err).NotTo(HaveOccurred())
}

func (s *classicSide) namespace() string    { return s.site.Namespace }
func (s *classicSide) imageSetName() string { return s.site.ImageSetName() }

func (s *classicSide) aci(ctx context.Context) (*hiveextv1beta1.AgentClusterInstall, error) {
	aci := &hiveextv1beta1.AgentClusterInstall{}
	err := s.in.Lab.Client().Get(ctx, client.ObjectKey{Namespace: s.site.Namespace, Name: s.site.Name}, aci)
	return aci, err
}

func (s *classicSide) installFailed(ctx context.Context, g Gomega) {
	aci, err := s.aci(ctx)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(aci.Status.DebugInfo.State).NotTo(Equal(hiveextv1beta1.ClusterStateError), aci.Status.DebugInfo.StateInfo)
}

// kubeconfig is the Secret the AgentClusterInstall's cluster metadata
// names (see the day1 scenario).
func (s *classicSide) kubeconfig(ctx context.Context) ([]byte, error) {
	aci, err := s.aci(ctx)
	if err != nil {
		return nil, err
	}
	if aci.Spec.ClusterMetadata == nil {
		return nil, fmt.Errorf("AgentClusterInstall %s has no cluster metadata yet", aci.Name)
	}
	secret := &corev1.Secret{}
	if err := s.in.Lab.Client().Get(ctx, client.ObjectKey{Namespace: s.site.Namespace, Name: aci.Spec.ClusterMetadata.AdminKubeconfigSecretRef.Name}, secret); err != nil {
		return nil, err
	}
	return secret.Data["kubeconfig"], nil
}

func (s *classicSide) addWorker(ctx context.Context, spoke client.Client) string {
	scenarios.AddZTPDay2Worker(ctx, scenarios.ZTPDay2WorkerInput{Hosts: s.in.Hosts, Hub: s.in.Lab.Client(), Spoke: spoke,
		Site: s.site, Name: day2HostName, Interval: interval(s.in, "wait-machines-running")})
	return day2HostName
}

// update is `oc adm upgrade --allow-explicit-upgrade --to-image` with the
// release named in its source by digest: the nodes' mirrors serve it.
func (s *classicSide) update(ctx context.Context, spoke client.Client) {
	rel := published(s.in, updateVersion)
	By("setting the spoke's ClusterVersion desiredUpdate to the source's image of " + updateVersion + " by digest")
	cv := &configv1.ClusterVersion{}
	Expect(spoke.Get(ctx, client.ObjectKey{Name: cvo.Name}, cv)).To(Succeed())
	before := cv.DeepCopy()
	cv.Spec.DesiredUpdate = &configv1.Update{Image: rel.Image}
	Expect(spoke.Patch(ctx, cv, client.MergeFrom(before))).To(Succeed())
}

func (s *classicSide) completed(ctx context.Context, g Gomega, spoke client.Client) {
	expectHistoryCompleted(ctx, g, spoke, updateVersion)
}

func expectHistoryCompleted(ctx context.Context, g Gomega, spoke client.Client, version string) {
	cv := &configv1.ClusterVersion{}
	g.Expect(spoke.Get(ctx, client.ObjectKey{Name: cvo.Name}, cv)).To(Succeed())
	g.Expect(cv.Status.History).NotTo(BeEmpty())
	h := cv.Status.History[0]
	g.Expect(h.Version).To(Equal(version), "newest ClusterVersion history entry")
	g.Expect(h.State).To(Equal(configv1.CompletedUpdate), "ClusterVersion history entry of %s; conditions %s", version, conditionsOf(cv))
}

func conditionsOf(cv *configv1.ClusterVersion) string {
	var out []string
	for _, c := range cv.Status.Conditions {
		out = append(out, fmt.Sprintf("%s=%s/%s: %s", c.Type, c.Status, c.Reason, c.Message))
	}
	return strings.Join(out, "; ")
}
