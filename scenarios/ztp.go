package scenarios

import (
	hivev1 "github.com/openshift/hive/apis/hive/v1"
	"github.com/openshift/hive/apis/hive/v1/agent"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/paritylab/paritylab/framework"
	agentv1beta1 "github.com/paritylab/paritylab/providers/thirdparty/agentinstall/v1beta1"
	hiveextv1beta1 "github.com/paritylab/paritylab/providers/thirdparty/hiveextensions/v1beta1"
)

// ZTPSite is a cluster as a ZTP user describes it: one namespace holding
// the ClusterDeployment, AgentClusterInstall and InfraEnv of the same name.
type ZTPSite struct {
	Namespace, Name string
	ControlPlane    int
	Workers         int
	// ReleaseImage is the ClusterImageSet's release; Version names it.
	ReleaseImage, Version string
	// PullSecret is the content of .dockerconfigjson.
	PullSecret string
	SSHKey     string
	// Network is the site's platform networking; a multi-node site
	// without VIPs does not install (assisted-service requires them on
	// the BareMetal platform it picks).
	Network SiteNetwork
}

// SiteNetwork is the BareMetal-platform networking of a multi-node ZTP
// site: its machine network and the API and ingress VIPs in it.
type SiteNetwork struct {
	MachineNetwork     string
	APIVIP, IngressVIP string
}

// LabSiteNetwork is the networking of the lab's ZTP sites. The lab's
// hosts each sit on a /24 of their own inside 10.100.0.0/16
// (lab/machines gives the n-th host of a run 10.100.<n mod 250>.15), so
// the site names the /16 as its machine network, which every host
// belongs to, and takes its VIPs from 10.100.254.0/24, where no host
// is. The site is on the BareMetal platform, as assisted-service
// chooses for a multi-node cluster on cluster-managed networking, so
// its installed cluster has the machine API the ZTP flow is compared
// on.
var LabSiteNetwork = SiteNetwork{MachineNetwork: "10.100.0.0/16", APIVIP: "10.100.254.10", IngressVIP: "10.100.254.11"}

func (n SiteNetwork) apply(spec *hiveextv1beta1.AgentClusterInstallSpec) {
	if n.MachineNetwork != "" {
		spec.Networking.MachineNetwork = []hiveextv1beta1.MachineNetworkEntry{{CIDR: n.MachineNetwork}}
	}
	if n.APIVIP != "" {
		spec.APIVIPs = []string{n.APIVIP}
	}
	if n.IngressVIP != "" {
		spec.IngressVIPs = []string{n.IngressVIP}
	}
}

// ImageSetName is the site's ClusterImageSet (cluster-scoped, one per
// site so that sites never share one).
func (s ZTPSite) ImageSetName() string { return s.Namespace + "-openshift-" + s.Version }

// Manifests are the objects a ZTP user writes for the site, in creation
// order; the site's namespace must exist.
func (s ZTPSite) Manifests() []client.Object {
	ns, name := s.Namespace, s.Name
	selector := map[string]string{"cluster": name}
	aci := &hiveextv1beta1.AgentClusterInstall{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: hiveextv1beta1.AgentClusterInstallSpec{
			ClusterDeploymentRef:  corev1.LocalObjectReference{Name: name},
			ImageSetRef:           &hivev1.ClusterImageSetReference{Name: s.ImageSetName()},
			ProvisionRequirements: hiveextv1beta1.ProvisionRequirements{ControlPlaneAgents: s.ControlPlane, WorkerAgents: s.Workers},
			Networking: hiveextv1beta1.Networking{
				ClusterNetwork: []hiveextv1beta1.ClusterNetworkEntry{{CIDR: "10.128.0.0/14", HostPrefix: 23}},
				ServiceNetwork: []string{"172.30.0.0/16"},
			},
			SSHPublicKey: s.SSHKey}}
	s.Network.apply(&aci.Spec)
	return []client.Object{
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "pull-secret", Namespace: ns}, Type: corev1.SecretTypeDockerConfigJson,
			StringData: map[string]string{corev1.DockerConfigJsonKey: s.PullSecret}},
		&hivev1.ClusterImageSet{ObjectMeta: metav1.ObjectMeta{Name: s.ImageSetName()}, Spec: hivev1.ClusterImageSetSpec{ReleaseImage: s.ReleaseImage}},
		&hivev1.ClusterDeployment{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
			Spec: hivev1.ClusterDeploymentSpec{ClusterName: name, BaseDomain: "lab.example",
				Platform:          hivev1.Platform{AgentBareMetal: &agent.BareMetalPlatform{AgentSelector: metav1.LabelSelector{MatchLabels: selector}}},
				PullSecretRef:     &corev1.LocalObjectReference{Name: "pull-secret"},
				ClusterInstallRef: &hivev1.ClusterInstallLocalReference{Group: hiveextv1beta1.GroupName, Version: hiveextv1beta1.Version, Kind: "AgentClusterInstall", Name: name}}},
		aci,
		&agentv1beta1.InfraEnv{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
			Spec: agentv1beta1.InfraEnvSpec{
				ClusterRef:    &agentv1beta1.ClusterReference{Name: name, Namespace: ns},
				PullSecretRef: &corev1.LocalObjectReference{Name: "pull-secret"},
				AgentLabels:   selector}},
	}
}

// HostLabels are the labels that put a BareMetalHost into the site's
// InfraEnv.
func (s ZTPSite) HostLabels() map[string]string {
	return map[string]string{agentv1beta1.InfraEnvNameLabel: s.Name}
}

// HostClaim is how a ZTP site writes a host of the given role on the hub:
// labelled with the site's InfraEnv, with the BMAC annotations, and
// online, as the siteconfig operator's assisted-installer templates
// write it. The converged flow needs it online: its BMAC never powers a
// host on, and the bare-metal operator gives a provisioned host the
// power spec.online asks for.
func (s ZTPSite) HostClaim(hostname, role string) framework.HostClaim {
	return framework.HostClaim{Namespace: s.Namespace, Name: hostname, Labels: s.HostLabels(), Annotations: HostAnnotations(hostname, role), Online: true}
}

// HostAnnotations are the BMAC annotations of a host of the given role,
// as the siteconfig operator's templates write them: inspect.metal3.io
// carries the node's ironicInspect, empty by default, which leaves
// inspection on (the bare-metal operator takes the annotation as a
// request and removes it); the converged flow's hosts are inspected by
// the operator like any other.
func HostAnnotations(hostname, role string) map[string]string {
	return map[string]string{"bmac.agent-install.openshift.io/hostname": hostname, "bmac.agent-install.openshift.io/role": role,
		"inspect.metal3.io": ""}
}
