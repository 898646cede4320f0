package scenarios

import (
	"strings"

	capm3v1beta2 "github.com/metal3-io/cluster-api-provider-metal3/api/v1beta2"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	bootstrapv1 "github.com/paritylab/paritylab/providers/bootstrap/api/v1alpha2"
	controlplanev1 "github.com/paritylab/paritylab/providers/controlplane/api/v1alpha3"
)

// HostRoleLabel is the label the CAPI flow's Metal3MachineTemplates
// select hosts by (a CAPM3 hostSelector), valued RoleControlPlane or
// RoleWorker.
const (
	HostRoleLabel    = "lab.paritylab.io/role"
	RoleControlPlane = "control-plane"
	RoleWorker       = "worker"
)

// HostPoolLabel puts hosts in a scenario's pool of its own, for a worker
// set that must take its hosts from that pool only (both flows' sets
// select hosts by it and by HostRoleLabel).
const HostPoolLabel = "lab.paritylab.io/pool"

// CAPISite is a cluster as a CAPI user describes it for our agent
// providers: one namespace holding the Cluster, the Metal3Cluster, an
// OpenshiftAssistedControlPlane and a MachineDeployment of workers, with
// Metal3MachineTemplates choosing hosts by role.
type CAPISite struct {
	Namespace, Name string
	ControlPlane    int32
	Workers         int32
	// Version is the OpenShift distribution version; ReleaseRepository is
	// the registry repository (host/path) its release image is in.
	Version, ReleaseRepository string
	// Image is the discovery image the Metal3Machines write to hosts.
	Image capm3v1beta2.Image
	// PullSecret is the content of .dockerconfigjson.
	PullSecret string
	SSHKey     string
}

// WorkersName names the workers' MachineDeployment and templates.
func (s CAPISite) WorkersName() string { return s.Name + "-workers" }

// ControlPlaneName names the control plane's Metal3MachineTemplate.
func (s CAPISite) ControlPlaneName() string { return s.Name + "-control-plane" }

// KubeconfigSecret is where the control-plane provider writes the
// workload cluster's kubeconfig (key "value"), as CAPI core expects.
func (s CAPISite) KubeconfigSecret() string { return s.Name + "-kubeconfig" }

// Manifests are the objects a CAPI user writes, in creation order; the
// namespace must exist.
func (s CAPISite) Manifests() []client.Object {
	pullSecret := &corev1.LocalObjectReference{Name: "pull-secret"}
	return []client.Object{
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: pullSecret.Name, Namespace: s.Namespace}, Type: corev1.SecretTypeDockerConfigJson,
			StringData: map[string]string{corev1.DockerConfigJsonKey: s.PullSecret}},
		&capm3v1beta2.Metal3Cluster{ObjectMeta: s.meta(s.Name),
			Spec: capm3v1beta2.Metal3ClusterSpec{ControlPlaneEndpoint: capm3v1beta2.APIEndpoint{Host: "api." + s.Name + ".lab.example", Port: 6443}}},
		s.machineTemplate(s.ControlPlaneName(), RoleControlPlane),
		s.machineTemplate(s.WorkersName(), RoleWorker),
		s.controlPlane(pullSecret),
		&bootstrapv1.OpenshiftAssistedConfigTemplate{ObjectMeta: s.meta(s.WorkersName()),
			Spec: bootstrapv1.OpenshiftAssistedConfigTemplateSpec{Template: bootstrapv1.OpenshiftAssistedConfigTemplateResource{
				Spec: s.configSpec(pullSecret)}}},
		s.cluster(),
		s.MachineDeployment(s.WorkersName(), s.Workers),
	}
}

func (s CAPISite) meta(name string) metav1.ObjectMeta {
	return metav1.ObjectMeta{Name: name, Namespace: s.Namespace}
}

func (s CAPISite) machineTemplate(name, role string) *capm3v1beta2.Metal3MachineTemplate {
	return &capm3v1beta2.Metal3MachineTemplate{ObjectMeta: s.meta(name),
		Spec: capm3v1beta2.Metal3MachineTemplateSpec{Template: capm3v1beta2.Metal3MachineTemplateResource{
			Spec: capm3v1beta2.Metal3MachineSpec{Image: s.Image,
				HostSelector: &capm3v1beta2.HostSelector{MatchLabels: map[string]string{HostRoleLabel: role}}}}}}
}

// WorkerTemplate is a Metal3MachineTemplate named name like the site's
// workers', choosing only hosts that carry hostLabels as well.
func (s CAPISite) WorkerTemplate(name string, hostLabels map[string]string) *capm3v1beta2.Metal3MachineTemplate {
	t := s.machineTemplate(name, RoleWorker)
	for k, v := range hostLabels {
		t.Spec.Template.Spec.HostSelector.MatchLabels[k] = v
	}
	return t
}

// Metal3UUIDLabel is the Node label CAPM3 finds a host's Node by (valued
// the BareMetalHost's UID); CAPOA's documentation has users give it to the
// kubelet from the config drive's metadata, as configSpec does.
const Metal3UUIDLabel = "metal3.io/uuid"

// configSpec is the bootstrap config of every node.
func (s CAPISite) configSpec(pullSecret *corev1.LocalObjectReference) bootstrapv1.OpenshiftAssistedConfigSpec {
	return bootstrapv1.OpenshiftAssistedConfigSpec{PullSecretRef: pullSecret, SSHAuthorizedKey: s.SSHKey,
		NodeRegistration: bootstrapv1.NodeRegistrationOptions{KubeletExtraLabels: []string{Metal3UUIDLabel + "=$METADATA_UUID"}}}
}

func (s CAPISite) controlPlane(pullSecret *corev1.LocalObjectReference) *controlplanev1.OpenshiftAssistedControlPlane {
	cp := &controlplanev1.OpenshiftAssistedControlPlane{ObjectMeta: s.meta(s.Name),
		Spec: controlplanev1.OpenshiftAssistedControlPlaneSpec{
			DistributionVersion: s.Version,
			Replicas:            ptr.To(s.ControlPlane),
			MachineTemplate: controlplanev1.OpenshiftAssistedControlPlaneMachineTemplate{Spec: controlplanev1.OpenshiftAssistedControlPlaneMachineTemplateSpec{
				InfrastructureRef: clusterv1.ContractVersionedObjectReference{APIGroup: capm3v1beta2.GroupVersion.Group, Kind: "Metal3MachineTemplate", Name: s.ControlPlaneName()}}},
			OpenshiftAssistedConfigSpec: s.configSpec(pullSecret),
			Config:                      controlplanev1.OpenshiftAssistedControlPlaneConfigSpec{BaseDomain: "lab.example", PullSecretRef: pullSecret, SSHAuthorizedKey: s.SSHKey},
		}}
	cp.Annotations = map[string]string{controlplanev1.ReleaseImageRepositoryAnnotation: s.ReleaseRepository}
	return cp
}

func (s CAPISite) cluster() *clusterv1.Cluster {
	return &clusterv1.Cluster{ObjectMeta: s.meta(s.Name),
		Spec: clusterv1.ClusterSpec{
			ClusterNetwork: clusterv1.ClusterNetwork{
				Pods:     clusterv1.NetworkRanges{CIDRBlocks: []string{"10.128.0.0/14"}},
				Services: clusterv1.NetworkRanges{CIDRBlocks: []string{"172.30.0.0/16"}},
			},
			InfrastructureRef: clusterv1.ContractVersionedObjectReference{APIGroup: capm3v1beta2.GroupVersion.Group, Kind: "Metal3Cluster", Name: s.Name},
			ControlPlaneRef: clusterv1.ContractVersionedObjectReference{APIGroup: controlplanev1.GroupVersion.Group,
				Kind: "OpenshiftAssistedControlPlane", Name: s.Name},
		}}
}

// MachineDeployment is a MachineDeployment of workers named name over
// the site's worker templates.
func (s CAPISite) MachineDeployment(name string, replicas int32) *clusterv1.MachineDeployment {
	return &clusterv1.MachineDeployment{ObjectMeta: s.meta(name),
		Spec: clusterv1.MachineDeploymentSpec{
			ClusterName: s.Name,
			Replicas:    ptr.To(replicas),
			Template: clusterv1.MachineTemplateSpec{Spec: clusterv1.MachineSpec{
				ClusterName: s.Name,
				Bootstrap: clusterv1.Bootstrap{ConfigRef: clusterv1.ContractVersionedObjectReference{
					APIGroup: bootstrapv1.GroupVersion.Group, Kind: "OpenshiftAssistedConfigTemplate", Name: s.WorkersName()}},
				InfrastructureRef: clusterv1.ContractVersionedObjectReference{APIGroup: capm3v1beta2.GroupVersion.Group, Kind: "Metal3MachineTemplate", Name: s.WorkersName()},
			}},
		}}
}

// CAPIHostOf is the host name in a metal3://<ns>/<host>/<m3m> providerID.
func CAPIHostOf(providerID string) string {
	parts := strings.Split(strings.TrimPrefix(providerID, "metal3://"), "/")
	if len(parts) != 3 {
		return ""
	}
	return parts[1]
}
