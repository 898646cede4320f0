package disconnected

import (
	"context"
	"fmt"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/paritylab/paritylab/framework"
	"github.com/paritylab/paritylab/lab/releases"
	controlplanev1 "github.com/paritylab/paritylab/providers/controlplane/api/v1alpha3"
	hiveextv1beta1 "github.com/paritylab/paritylab/providers/thirdparty/hiveextensions/v1beta1"
	"github.com/paritylab/paritylab/scenarios"
)

// The CAPI flow's day-2 worker pool and the imageRegistryRef ConfigMap.
const (
	day2Pool            = "disconnected-day2"
	imageRegistryConfig = "mirror-registries"
)

// capiSide installs through our agent providers on the disconnected hub.
// CAPOA reads the release where the control plane's
// release-image-repository annotation says, never through mirrors, so
// the user names the mirror's release repository there; imageRegistryRef
// gives the cluster the site's mirrors after install.
type capiSide struct {
	in   scenarios.Input
	run  *scenarios.Run
	site scenarios.CAPISite
}

// capiSite writes a CAPI site of the scenario in a new namespace, its
// release read from repository; with mirrors, imageRegistryRef names a
// ConfigMap of the site's mirrors.
func (s *capiSide) capiSite(ctx context.Context, prefix, repository string, mirrors bool) scenarios.CAPISite {
	hub := s.in.Lab.Client()
	ns, err := framework.CreateNamespace(ctx, hub, prefix)
	Expect(err).NotTo(HaveOccurred())
	site := scenarios.CAPISite{Namespace: ns.Name, Name: ns.Name, ControlPlane: controlPlaneReplicas, Version: installedVersion,
		ReleaseRepository: repository, Image: s.in.CAPI.Image, PullSecret: pullSecret, SSHKey: s.in.SSHKey}
	objs := site.Manifests()
	if mirrors {
		objs = append([]client.Object{mirrorConfigMap(s.in, ns.Name, imageRegistryConfig)}, objs...)
	}
	By(fmt.Sprintf("writing the CAPI manifests of %s: release-image-repository %s, imageRegistryRef %t", ns.Name, hostNames(s.in, repository), mirrors))
	for _, o := range objs {
		if cp, ok := o.(*controlplanev1.OpenshiftAssistedControlPlane); ok && mirrors {
			cp.Spec.Config.ImageRegistryRef = &corev1.LocalObjectReference{Name: imageRegistryConfig}
		}
		Expect(hub.Create(ctx, o)).To(Succeed(), "create %T %s", o, o.GetName())
	}
	return site
}

func (s *capiSide) controlPlane(ctx context.Context, g Gomega, site scenarios.CAPISite) *controlplanev1.OpenshiftAssistedControlPlane {
	cp := &controlplanev1.OpenshiftAssistedControlPlane{}
	g.Expect(s.in.Lab.Client().Get(ctx, client.ObjectKey{Namespace: site.Namespace, Name: site.Name}, cp)).To(Succeed())
	return cp
}

// misconfigured: the control plane names the source's repository, as it
// would quay.io's on a connected hub. The provider cannot read the
// release and writes neither ClusterImageSet nor AgentClusterInstall.
func (s *capiSide) misconfigured(ctx context.Context) string {
	site := s.capiSite(ctx, "disconnected-capi-nomirror", site(s.in).SourceHost+"/"+releases.SourceReleasePath, false)
	defer s.remove(ctx, site)
	var reason string
	iv := interval(s.in, "wait-object")
	Eventually(func(g Gomega) {
		cp := s.controlPlane(ctx, g, site)
		c := meta.FindStatusCondition(cp.Status.Conditions, controlplanev1.KubernetesVersionAvailableCondition)
		g.Expect(c).NotTo(BeNil(), "control plane KubernetesVersionAvailable")
		g.Expect(c.Status).To(Equal(metav1.ConditionFalse), "control plane KubernetesVersionAvailable: %s", c.Message)
		g.Expect(c.Message).To(ContainSubstring("no route to host"), "the cause says the source is out of reach")
		reason = c.Reason
	}).WithContext(ctx).WithTimeout(iv.Timeout).WithPolling(iv.Polling).Should(Succeed())
	acis := &hiveextv1beta1.AgentClusterInstallList{}
	Expect(s.in.Lab.Client().List(ctx, acis, client.InNamespace(site.Namespace))).To(Succeed())
	Expect(acis.Items).To(BeEmpty(), "no AgentClusterInstall for a release that could not be read")
	return "OpenshiftAssistedControlPlane KubernetesVersionAvailable=False/" + reason + " (no route to host); no AgentClusterInstall"
}

// remove deletes a sub-case's site: its Cluster, then its namespace.
func (s *capiSide) remove(ctx context.Context, site scenarios.CAPISite) {
	hub := s.in.Lab.Client()
	Expect(client.IgnoreNotFound(hub.Delete(ctx, &clusterv1.Cluster{ObjectMeta: metav1.ObjectMeta{Namespace: site.Namespace, Name: site.Name}}))).To(Succeed())
	Expect(client.IgnoreNotFound(hub.Delete(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: site.Namespace}}))).To(Succeed())
}

// byTag: a CAPI user names a version, never an image; the provider reads
// the release by its tag (<repository>:<version>-x86_64) on the hub and
// must write the ClusterImageSet by digest (ACM-33187). That shows on the
// flow's own install (tagOutcome), so there is nothing to write here.
func (s *capiSide) byTag(context.Context) string { return "" }

func (s *capiSide) install(ctx context.Context) {
	s.site = s.capiSite(ctx, "disconnected-capi", site(s.in).MirrorHost+"/"+releases.MirrorReleaseImagesPath, true)
	By("adding the control-plane hosts as BareMetalHosts")
	var claims []framework.HostClaim
	for i := range controlPlaneReplicas {
		claims = append(claims, framework.HostClaim{Namespace: s.site.Namespace, Name: fmt.Sprintf("disconnected-master-%d", i),
			Labels: map[string]string{scenarios.HostRoleLabel: scenarios.RoleControlPlane}})
	}
	_, err := s.in.Hosts.Claim(ctx, claims...)
	Expect(err).NotTo(HaveOccurred())
}

func (s *capiSide) namespace() string { return s.site.Namespace }

// imageSetName is the ClusterImageSet the provider keeps, named as CAPOA
// names it.
func (s *capiSide) imageSetName() string { return s.site.Namespace + "-" + s.site.Name }

func (s *capiSide) installFailed(context.Context, Gomega) {}

func (s *capiSide) kubeconfig(ctx context.Context) ([]byte, error) {
	secret := &corev1.Secret{}
	if err := s.in.Lab.Client().Get(ctx, client.ObjectKey{Namespace: s.site.Namespace, Name: s.site.KubeconfigSecret()}, secret); err != nil {
		return nil, err
	}
	return secret.Data["value"], nil
}

func (s *capiSide) addWorker(ctx context.Context, spoke client.Client) string {
	return scenarios.AddCAPIDay2Worker(ctx, scenarios.CAPIDay2WorkerInput{Hosts: s.in.Hosts, Hub: s.in.Lab.Client(), Spoke: spoke,
		Site: s.site, HostName: day2HostName, Pool: day2Pool, Interval: interval(s.in, "wait-machines-running")})
}

func (s *capiSide) update(ctx context.Context, _ client.Client) {
	By("setting the control plane's spec.distributionVersion to " + updateVersion)
	cp := s.controlPlane(ctx, Default, s.site)
	before := cp.DeepCopy()
	cp.Spec.DistributionVersion = updateVersion
	Expect(s.in.Lab.Client().Patch(ctx, cp, client.MergeFrom(before))).To(Succeed())
}

// completed: the spoke's history, then the control plane's
// UpgradeCompleted.
func (s *capiSide) completed(ctx context.Context, g Gomega, spoke client.Client) {
	expectHistoryCompleted(ctx, g, spoke, updateVersion)
	cp := s.controlPlane(ctx, g, s.site)
	g.Expect(cp.Status.DistributionVersion).To(Equal(updateVersion), "control plane status.distributionVersion")
	c := meta.FindStatusCondition(cp.Status.Conditions, controlplanev1.UpgradeCompletedCondition)
	g.Expect(c).NotTo(BeNil(), "control plane UpgradeCompleted")
	g.Expect(c.Status).To(Equal(metav1.ConditionTrue), "control plane UpgradeCompleted: %s", c.Message)
}
