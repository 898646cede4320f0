package framework

import (
	bmov1alpha1 "github.com/metal3-io/baremetal-operator/apis/metal3.io/v1alpha1"
	hypershiftv1beta1 "github.com/openshift/hypershift/api/hypershift/v1beta1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/paritylab/paritylab/lab/hypershift"
	agentv1beta1 "github.com/paritylab/paritylab/providers/thirdparty/agentinstall/v1beta1"
)

// HostedClusterInput is a HyperShift hosted cluster on the agent platform
// as its user describes it: the HostedCluster, the namespace of the
// Agents its NodePools may take and one NodePool over them.
type HostedClusterInput struct {
	// Namespace and Name of the HostedCluster.
	Namespace, Name string
	// AgentNamespace holds the InfraEnv (named like the namespace) the
	// hosts boot and their Agents.
	AgentNamespace string
	// ReleaseImage is the OpenShift release of the cluster and its pool.
	ReleaseImage string
	// NodePool names the pool; PoolLabels are the labels the InfraEnv
	// gives its Agents and the pool's agentLabelSelector matches.
	NodePool   string
	PoolLabels map[string]string
	// PrivateCAPITypes puts the cluster's CAPI objects in HyperShift's
	// private groups (hypershift.PrivateCAPITypesAnnotation).
	PrivateCAPITypes bool
	// PullSecret is the content of .dockerconfigjson.
	PullSecret string
}

// HostedClusterManifests are the objects a HyperShift user writes for an
// agent hosted cluster, in creation order: both namespaces with their
// pull secrets, the HostedCluster, an InfraEnv of no cluster (late
// binding) and a NodePool of no replicas.
func HostedClusterManifests(in HostedClusterInput) []client.Object {
	var objs []client.Object
	for _, ns := range []string{in.Namespace, in.AgentNamespace} {
		objs = append(objs, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}},
			&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "pull-secret", Namespace: ns}, Type: corev1.SecretTypeDockerConfigJson,
				StringData: map[string]string{corev1.DockerConfigJsonKey: in.PullSecret}})
	}
	return append(objs, in.HostedCluster(), in.InfraEnv(), in.NodePoolOf(0))
}

// HostedCluster is the HostedCluster: the agent platform, etcd managed,
// the API server on a loopback NodePort and the other services as Routes,
// as `hcp create cluster agent` writes them.
func (in HostedClusterInput) HostedCluster() *hypershiftv1beta1.HostedCluster {
	hc := &hypershiftv1beta1.HostedCluster{
		ObjectMeta: metav1.ObjectMeta{Namespace: in.Namespace, Name: in.Name},
		Spec: hypershiftv1beta1.HostedClusterSpec{
			Release:    hypershiftv1beta1.Release{Image: in.ReleaseImage},
			PullSecret: corev1.LocalObjectReference{Name: "pull-secret"},
			DNS:        hypershiftv1beta1.DNSSpec{BaseDomain: "lab.example"},
			Etcd: hypershiftv1beta1.EtcdSpec{ManagementType: hypershiftv1beta1.Managed, Managed: &hypershiftv1beta1.ManagedEtcdSpec{
				Storage: hypershiftv1beta1.ManagedEtcdStorageSpec{Type: hypershiftv1beta1.PersistentVolumeEtcdStorage}}},
			Platform: hypershiftv1beta1.PlatformSpec{Type: hypershiftv1beta1.AgentPlatform,
				Agent: &hypershiftv1beta1.AgentPlatformSpec{AgentNamespace: in.AgentNamespace}},
			Services: []hypershiftv1beta1.ServicePublishingStrategyMapping{
				{Service: hypershiftv1beta1.APIServer, ServicePublishingStrategy: hypershiftv1beta1.ServicePublishingStrategy{
					Type: hypershiftv1beta1.NodePort, NodePort: &hypershiftv1beta1.NodePortPublishingStrategy{Address: "127.0.0.1"}}},
				routeService(hypershiftv1beta1.OAuthServer), routeService(hypershiftv1beta1.Konnectivity), routeService(hypershiftv1beta1.Ignition),
			},
		},
	}
	if in.PrivateCAPITypes {
		hc.Annotations = map[string]string{hypershift.PrivateCAPITypesAnnotation: "true"}
	}
	return hc
}

// InfraEnv is the Agents' InfraEnv: no cluster, the pool's labels.
func (in HostedClusterInput) InfraEnv() *agentv1beta1.InfraEnv {
	return &agentv1beta1.InfraEnv{ObjectMeta: metav1.ObjectMeta{Name: in.AgentNamespace, Namespace: in.AgentNamespace},
		Spec: agentv1beta1.InfraEnvSpec{PullSecretRef: &corev1.LocalObjectReference{Name: "pull-secret"}, AgentLabels: in.PoolLabels}}
}

// NodePoolOf is the NodePool with replicas: upgrade type Replace, the
// cluster's release, Agents chosen by the pool's labels.
func (in HostedClusterInput) NodePoolOf(replicas int32) *hypershiftv1beta1.NodePool {
	return &hypershiftv1beta1.NodePool{ObjectMeta: metav1.ObjectMeta{Namespace: in.Namespace, Name: in.NodePool},
		Spec: hypershiftv1beta1.NodePoolSpec{
			ClusterName: in.Name, Replicas: ptr.To(replicas), Release: hypershiftv1beta1.Release{Image: in.ReleaseImage},
			Management: hypershiftv1beta1.NodePoolManagement{UpgradeType: hypershiftv1beta1.UpgradeTypeReplace},
			Platform: hypershiftv1beta1.NodePoolPlatform{Type: hypershiftv1beta1.AgentPlatform, Agent: &hypershiftv1beta1.AgentNodePoolPlatform{
				AgentLabelSelector: &metav1.LabelSelector{MatchLabels: in.PoolLabels}}}}}
}

// HostClaim puts a lab host in the agent namespace, labelled with the
// InfraEnv so that it boots its discovery image (the BMAC's late-binding
// hosts), its Node named hostname. As HyperShift's agent docs write
// such a host, it skips the bare-metal operator's inspection: the Agent
// reports the hardware.
func (in HostedClusterInput) HostClaim(hostname string) HostClaim {
	return HostClaim{Namespace: in.AgentNamespace, Name: hostname, Online: true,
		Labels: map[string]string{agentv1beta1.InfraEnvNameLabel: in.AgentNamespace},
		Annotations: map[string]string{"bmac.agent-install.openshift.io/hostname": hostname,
			bmov1alpha1.InspectAnnotationPrefix: bmov1alpha1.InspectAnnotationValueDisabled}}
}

// ControlPlaneNamespace is where the cluster's hosted control plane and
// CAPI objects live.
func (in HostedClusterInput) ControlPlaneNamespace() string {
	return hypershift.ControlPlaneNamespace(in.HostedCluster())
}

func routeService(s hypershiftv1beta1.ServiceType) hypershiftv1beta1.ServicePublishingStrategyMapping {
	return hypershiftv1beta1.ServicePublishingStrategyMapping{Service: s,
		ServicePublishingStrategy: hypershiftv1beta1.ServicePublishingStrategy{Type: hypershiftv1beta1.Route}}
}
