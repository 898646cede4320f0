package v1alpha3

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	bootstrapv1 "github.com/paritylab/paritylab/providers/bootstrap/api/v1alpha2"
)

// Condition types of OpenshiftAssistedControlPlane and their reasons.
const (
	// ReadyCondition summarises Available, KubeconfigAvailable,
	// MachinesCreated, MachinesReady, KubernetesVersionAvailable,
	// UpgradeAvailable and UpgradeCompleted.
	ReadyCondition = "Ready"

	// AvailableCondition is True once the cluster is installed far enough
	// to serve (install finalizing, installed or adding hosts). Cluster API
	// mirrors it into the Cluster's ControlPlaneAvailable condition.
	AvailableCondition = "Available"
	// AvailableReason: the installed control plane serves.
	AvailableReason = "Available"
	// WaitingForControlPlaneEndpointReason: the Cluster has no control
	// plane endpoint yet.
	WaitingForControlPlaneEndpointReason = "WaitingForControlPlaneEndpoint"
	// InstallingReason: assisted-service is installing the cluster; the
	// message carries the install state.
	InstallingReason = "Installing"
	// InstallFailedReason: the install failed; the message says why.
	InstallFailedReason = "InstallFailed"

	// KubeconfigAvailableCondition is True when the <cluster>-kubeconfig
	// Secret holds the installed cluster's admin kubeconfig.
	KubeconfigAvailableCondition = "KubeconfigAvailable"
	// KubeconfigAvailableReason: the Secret is written.
	KubeconfigAvailableReason = "KubeconfigAvailable"
	// WaitingForAdminKubeconfigReason: the install has not published its
	// admin kubeconfig yet.
	WaitingForAdminKubeconfigReason = "WaitingForAdminKubeconfig"

	// MachinesCreatedCondition is True when spec.replicas control-plane
	// Machines exist.
	MachinesCreatedCondition = "MachinesCreated"
	// MachinesCreatedReason: every desired Machine exists.
	MachinesCreatedReason = "MachinesCreated"
	// ScalingUpReason: Machines are being created, one per reconcile.
	ScalingUpReason = "ScalingUp"
	// ScalingDownReason: Machines are being deleted, one at a time.
	ScalingDownReason = "ScalingDown"
	// ScaleDownBlockedReason: a scale-down would leave fewer etcd members
	// than a highly available control plane needs; the message says what
	// to do.
	ScaleDownBlockedReason = "ScaleDownBlockedByEtcdQuorum"
	// WaitingForMachineDeletionReason: a Machine is being deleted; no
	// other is created or deleted until it is gone.
	WaitingForMachineDeletionReason = "WaitingForMachineDeletion"
	// MachineCreateFailedReason: cloning the infrastructure template or
	// creating the bootstrap config or Machine failed.
	MachineCreateFailedReason = "MachineCreateFailed"
	// RemediatingReason: an unhealthy Machine flagged by a
	// MachineHealthCheck is being replaced.
	RemediatingReason = "Remediating"
	// RemediationBlockedReason: replacing an unhealthy Machine would lose
	// etcd quorum.
	RemediationBlockedReason = "RemediationBlockedByEtcdQuorum"

	// MachinesReadyCondition aggregates the Ready condition of the
	// control-plane Machines.
	MachinesReadyCondition = "MachinesReady"
	// NoMachinesReason: there are no control-plane Machines.
	NoMachinesReason = "NoMachines"

	// KubernetesVersionAvailableCondition is True when the Kubernetes
	// version of the release was read from the release image.
	KubernetesVersionAvailableCondition = "KubernetesVersionAvailable"
	// KubernetesVersionAvailableReason: status.version is known.
	KubernetesVersionAvailableReason = "KubernetesVersionAvailable"
	// ReleaseImageUnavailableReason: the release image could not be read;
	// the message carries the registry's error.
	ReleaseImageUnavailableReason = "ReleaseImageUnavailable"

	// UpgradeAvailableCondition says, once the cluster is installed,
	// whether the release of spec.distributionVersion can be updated to:
	// True when no update is asked for or its release image was read,
	// False while the registry does not serve it.
	UpgradeAvailableCondition = "UpgradeAvailable"
	// UpgradeAvailableReason: no update is asked for, or the release image
	// of the one asked for was read; the message names its digest.
	UpgradeAvailableReason = "UpgradeAvailable"
	// UpgradeImageUnavailableReason: the release image of the version asked
	// for could not be read, so no update is requested from the cluster;
	// the message names the image and the registry's error. Used by
	// UpgradeAvailable and UpgradeCompleted.
	UpgradeImageUnavailableReason = "UpgradeImageUnavailable"

	// UpgradeCompletedCondition is True when the installed OpenShift
	// version is spec.distributionVersion.
	UpgradeCompletedCondition = "UpgradeCompleted"
	// UpgradeCompletedReason: the cluster runs the desired version.
	UpgradeCompletedReason = "UpgradeCompleted"
	// UpgradeInProgressReason: the update was requested from the workload
	// cluster's version operator, which has yet to pick it up or is
	// applying it.
	UpgradeInProgressReason = "UpgradeInProgress"
	// UpgradeFailedReason: the cluster version operator refused or failed
	// the update it was asked for (having observed the request); the
	// message carries its reason.
	UpgradeFailedReason = "UpgradeFailed"
	// WaitingForInstallReason: nothing to upgrade before the cluster is
	// installed.
	WaitingForInstallReason = "WaitingForInstall"
	// WorkloadClusterUnreachableReason: the workload cluster's API could
	// not be reached.
	WorkloadClusterUnreachableReason = "WorkloadClusterUnreachable"

	// DeletingReason is used while the control plane is deleted.
	DeletingReason = "Deleting"
)

// Labels and annotations the control-plane provider reads or sets.
const (
	// ControlPlaneNameLabel on a control-plane Machine names its
	// OpenshiftAssistedControlPlane.
	ControlPlaneNameLabel = "cluster.x-k8s.io/control-plane-name"
	// ReleaseImageRepositoryAnnotation on an OpenshiftAssistedControlPlane
	// overrides the release image repository (default
	// quay.io/openshift-release-dev/ocp-release); the image is
	// <repository>:<distributionVersion>-<architecture>.
	ReleaseImageRepositoryAnnotation = "controlplane.cluster.x-k8s.io/release-image-repository"
	// DefaultReleaseImageRepository is where OpenShift releases are
	// published.
	DefaultReleaseImageRepository = "quay.io/openshift-release-dev/ocp-release"
	// InstallConfigOverrideAnnotation on an OpenshiftAssistedControlPlane
	// is JSON copied to the AgentClusterInstall's install-config overrides.
	InstallConfigOverrideAnnotation = "controlplane.cluster.x-k8s.io/install-config-override"
)

// Keys of the ConfigMap spec.config.imageRegistryRef names.
const (
	// RegistriesConfKey holds a containers-registries.conf(5) v2 TOML;
	// each [[registry]] needs a location and [[registry.mirror]] tables
	// (pull-from-mirror = "tag-only" ones become the ImageTagMirrorSet).
	RegistriesConfKey = "registries.conf"
	// CABundleKey holds PEM certificates trusted for the registries.
	CABundleKey = "ca-bundle.crt"
)

// OpenshiftAssistedControlPlaneSpec is the desired control plane.
type OpenshiftAssistedControlPlaneSpec struct {
	// distributionVersion is the OpenShift version to install and, once
	// installed, to upgrade to (in place, through the cluster version
	// operator).
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=64
	DistributionVersion string `json:"distributionVersion"`

	// replicas is the number of control-plane Machines: 1 for a
	// single-node cluster, 3 to 5 for a highly available one.
	// +optional
	// +kubebuilder:default=3
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=5
	Replicas *int32 `json:"replicas,omitempty"`

	// machineTemplate shapes the control-plane Machines.
	// +required
	MachineTemplate OpenshiftAssistedControlPlaneMachineTemplate `json:"machineTemplate"`

	// openshiftAssistedConfigSpec is the bootstrap config of each
	// control-plane Machine.
	// +optional
	OpenshiftAssistedConfigSpec bootstrapv1.OpenshiftAssistedConfigSpec `json:"openshiftAssistedConfigSpec,omitempty"`

	// config is the cluster to install.
	// +required
	Config OpenshiftAssistedControlPlaneConfigSpec `json:"config"`
}

// OpenshiftAssistedControlPlaneMachineTemplate shapes control-plane
// Machines, laid out as the v1beta2 contract wants (metadata, and spec with
// infrastructureRef, deletion and readinessGates).
type OpenshiftAssistedControlPlaneMachineTemplate struct {
	// metadata is put on each Machine (and propagated in place).
	// +optional
	ObjectMeta clusterv1.ObjectMeta `json:"metadata,omitempty,omitzero"`

	// spec of each Machine.
	// +required
	Spec OpenshiftAssistedControlPlaneMachineTemplateSpec `json:"spec"`
}

// OpenshiftAssistedControlPlaneMachineTemplateSpec is the Machine part of
// the template.
type OpenshiftAssistedControlPlaneMachineTemplateSpec struct {
	// infrastructureRef is the infrastructure machine template cloned for
	// each Machine.
	// +required
	InfrastructureRef clusterv1.ContractVersionedObjectReference `json:"infrastructureRef"`

	// deletion tunes Machine deletion.
	// +optional
	Deletion OpenshiftAssistedControlPlaneMachineTemplateDeletionSpec `json:"deletion,omitempty,omitzero"`

	// readinessGates add conditions to each Machine's Ready condition.
	// +optional
	// +listType=map
	// +listMapKey=conditionType
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=32
	ReadinessGates []clusterv1.MachineReadinessGate `json:"readinessGates,omitempty"`
}

// OpenshiftAssistedControlPlaneMachineTemplateDeletionSpec tunes Machine
// deletion.
// +kubebuilder:validation:MinProperties=1
type OpenshiftAssistedControlPlaneMachineTemplateDeletionSpec struct {
	// nodeDrainTimeoutSeconds bounds draining the node; 0 waits forever.
	// +optional
	// +kubebuilder:validation:Minimum=0
	NodeDrainTimeoutSeconds *int32 `json:"nodeDrainTimeoutSeconds,omitempty"`
	// nodeVolumeDetachTimeoutSeconds bounds waiting for volumes to detach.
	// +optional
	// +kubebuilder:validation:Minimum=0
	NodeVolumeDetachTimeoutSeconds *int32 `json:"nodeVolumeDetachTimeoutSeconds,omitempty"`
	// nodeDeletionTimeoutSeconds bounds deleting the Node.
	// +optional
	// +kubebuilder:validation:Minimum=0
	NodeDeletionTimeoutSeconds *int32 `json:"nodeDeletionTimeoutSeconds,omitempty"`
}

// OpenshiftAssistedControlPlaneConfigSpec is the cluster to install. It maps
// onto the ClusterDeployment and AgentClusterInstall.
type OpenshiftAssistedControlPlaneConfigSpec struct {
	// baseDomain of the cluster: the API is api.<clusterName>.<baseDomain>.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	BaseDomain string `json:"baseDomain"`

	// clusterName is the OpenShift cluster name; unset, the Cluster API
	// Cluster's name.
	// +optional
	// +kubebuilder:validation:MaxLength=54
	ClusterName string `json:"clusterName,omitempty"`

	// apiVIPs are the API virtual IPs, at most one per IP family.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=2
	APIVIPs []string `json:"apiVIPs,omitempty"`

	// ingressVIPs are the ingress virtual IPs, at most one per IP family.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=2
	IngressVIPs []string `json:"ingressVIPs,omitempty"`

	// pullSecretRef names a Secret (key .dockerconfigjson) with the
	// cluster's pull secret; unset, a placeholder is generated (enough for
	// OKD and for registries without authentication).
	// +optional
	PullSecretRef *corev1.LocalObjectReference `json:"pullSecretRef,omitempty"`

	// sshAuthorizedKey is added to every node.
	// +optional
	// +kubebuilder:validation:MaxLength=4096
	SSHAuthorizedKey string `json:"sshAuthorizedKey,omitempty"`

	// mastersSchedulable lets workloads run on control-plane nodes.
	// +optional
	MastersSchedulable bool `json:"mastersSchedulable,omitempty"`

	// manifestsConfigMapRefs name ConfigMaps of extra install manifests.
	// +optional
	// +listType=atomic
	ManifestsConfigMapRefs []ManifestsConfigMapReference `json:"manifestsConfigMapRefs,omitempty"`

	// imageRegistryRef names a ConfigMap with a registries.conf (mirrors)
	// and a ca-bundle.crt. The installed cluster gets them as extra
	// manifests (ConfigMap additional-registry-config): an
	// ImageDigestMirrorSet and ImageTagMirrorSet named additional-registry,
	// the CA and images.config.openshift.io/cluster. The release image is
	// not read through these mirrors, and the discovery image does not get
	// them: a disconnected hub needs the release-image-repository
	// annotation to name a mirror, and the AgentServiceConfig the mirrors.
	// +optional
	ImageRegistryRef *corev1.LocalObjectReference `json:"imageRegistryRef,omitempty"`

	// proxy is the cluster-wide proxy.
	// +optional
	Proxy *bootstrapv1.Proxy `json:"proxy,omitempty"`

	// diskEncryption of the nodes' disks.
	// +optional
	DiskEncryption *DiskEncryption `json:"diskEncryption,omitempty"`

	// networkType is the CNI plug-in.
	// +optional
	// +kubebuilder:validation:Enum=OVNKubernetes;OpenShiftSDN
	NetworkType string `json:"networkType,omitempty"`

	// capabilities selects optional OpenShift capabilities.
	// +optional
	Capabilities Capabilities `json:"capabilities,omitempty,omitzero"`
}

// ManifestsConfigMapReference names a ConfigMap of extra manifests.
type ManifestsConfigMapReference struct {
	// name of the ConfigMap.
	// +required
	// +kubebuilder:validation:MinLength=1
	Name string `json:"name"`
}

// DiskEncryption configures node disk encryption.
type DiskEncryption struct {
	// enableOn selects the nodes.
	// +optional
	// +kubebuilder:validation:Enum=none;all;masters;workers
	EnableOn string `json:"enableOn,omitempty"`
	// mode is tpmv2 or tang.
	// +optional
	// +kubebuilder:validation:Enum=tpmv2;tang
	Mode string `json:"mode,omitempty"`
	// tangServers is JSON describing the tang servers.
	// +optional
	TangServers string `json:"tangServers,omitempty"`
}

// Capabilities selects optional OpenShift capabilities.
type Capabilities struct {
	// baselineCapability is None, vCurrent or v4.x.
	// +optional
	BaselineCapability string `json:"baselineCapability,omitempty"`
	// additionalEnabledCapabilities are enabled on top of the baseline.
	// +optional
	// +listType=atomic
	AdditionalEnabledCapabilities []string `json:"additionalEnabledCapabilities,omitempty"`
}

// OpenshiftAssistedControlPlaneInitializationStatus is the Cluster API
// contract's view of the control plane's initialization.
// +kubebuilder:validation:MinProperties=1
type OpenshiftAssistedControlPlaneInitializationStatus struct {
	// controlPlaneInitialized is true once the installed cluster's API
	// accepts requests (its admin kubeconfig is published).
	// NOTE: part of the Cluster API contract.
	// +optional
	ControlPlaneInitialized *bool `json:"controlPlaneInitialized,omitempty"`
}

// OpenshiftAssistedControlPlaneStatus is the observed control plane.
type OpenshiftAssistedControlPlaneStatus struct {
	// conditions: Ready, Available, KubeconfigAvailable, MachinesCreated,
	// MachinesReady, KubernetesVersionAvailable, UpgradeAvailable,
	// UpgradeCompleted, Paused.
	// +optional
	// +listType=map
	// +listMapKey=type
	// +kubebuilder:validation:MaxItems=32
	Conditions []metav1.Condition `json:"conditions,omitempty"`

	// initialization is the Cluster API contract's initialization status.
	// +optional
	Initialization OpenshiftAssistedControlPlaneInitializationStatus `json:"initialization,omitempty,omitzero"`

	// selector selects the control-plane Machines, in label query syntax
	// (the /scale subresource's selector).
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=4096
	Selector string `json:"selector,omitempty"`

	// replicas is the number of control-plane Machines.
	// +optional
	Replicas *int32 `json:"replicas,omitempty"`

	// readyReplicas counts Machines whose Ready condition is True.
	// +optional
	ReadyReplicas *int32 `json:"readyReplicas,omitempty"`

	// availableReplicas counts Machines whose Available condition is True.
	// +optional
	AvailableReplicas *int32 `json:"availableReplicas,omitempty"`

	// upToDateReplicas counts Machines whose UpToDate condition is True.
	// +optional
	UpToDateReplicas *int32 `json:"upToDateReplicas,omitempty"`

	// version is the Kubernetes version of the installed release, read
	// from its release image.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=256
	Version string `json:"version,omitempty"`

	// distributionVersion is the installed OpenShift version.
	// +optional
	// +kubebuilder:validation:MaxLength=64
	DistributionVersion string `json:"distributionVersion,omitempty"`

	// releaseImage is the release image of spec.distributionVersion, by
	// digest when the registry answered.
	// +optional
	// +kubebuilder:validation:MaxLength=1024
	ReleaseImage string `json:"releaseImage,omitempty"`

	// observedGeneration is the generation the status describes.
	// +optional
	// +kubebuilder:validation:Minimum=1
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
}

// OpenshiftAssistedControlPlane installs an OpenShift cluster through
// assisted-service and manages its control-plane Machines.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:subresource:scale:specpath=.spec.replicas,statuspath=.status.replicas,selectorpath=.status.selector
// +kubebuilder:storageversion
// +kubebuilder:resource:path=openshiftassistedcontrolplanes,scope=Namespaced,categories=cluster-api,shortName=oacp;oacps
// +kubebuilder:metadata:labels="cluster.x-k8s.io/v1beta2=v1alpha3"
// +kubebuilder:printcolumn:name="Cluster",type="string",JSONPath=".metadata.labels['cluster\\.x-k8s\\.io/cluster-name']",description="Cluster"
// +kubebuilder:printcolumn:name="Initialized",type="boolean",JSONPath=".status.initialization.controlPlaneInitialized",description="Whether the control plane accepts requests"
// +kubebuilder:printcolumn:name="Available",type="string",JSONPath=".status.conditions[?(@.type==\"Available\")].status",description="Available condition"
// +kubebuilder:printcolumn:name="Desired",type="integer",JSONPath=".spec.replicas",description="Desired control-plane Machines",priority=10
// +kubebuilder:printcolumn:name="Replicas",type="integer",JSONPath=".status.replicas",description="Control-plane Machines"
// +kubebuilder:printcolumn:name="Ready",type="integer",JSONPath=".status.readyReplicas",description="Ready control-plane Machines"
// +kubebuilder:printcolumn:name="Up-To-Date",type="integer",JSONPath=".status.upToDateReplicas",description="Up-to-date control-plane Machines"
// +kubebuilder:printcolumn:name="Distribution",type="string",JSONPath=".status.distributionVersion",description="Installed OpenShift version"
// +kubebuilder:printcolumn:name="Version",type="string",JSONPath=".status.version",description="Kubernetes version"
// +kubebuilder:printcolumn:name="Age",type="date",JSONPath=".metadata.creationTimestamp"
type OpenshiftAssistedControlPlane struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   OpenshiftAssistedControlPlaneSpec   `json:"spec,omitempty"`
	Status OpenshiftAssistedControlPlaneStatus `json:"status,omitempty"`
}

// GetConditions returns the control plane's conditions.
func (cp *OpenshiftAssistedControlPlane) GetConditions() []metav1.Condition {
	return cp.Status.Conditions
}

// SetConditions replaces the control plane's conditions.
func (cp *OpenshiftAssistedControlPlane) SetConditions(conditions []metav1.Condition) {
	cp.Status.Conditions = conditions
}

// OpenshiftAssistedControlPlaneList is a list of control planes.
//
// +kubebuilder:object:root=true
type OpenshiftAssistedControlPlaneList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []OpenshiftAssistedControlPlane `json:"items"`
}

func init() {
	SchemeBuilder.Register(&OpenshiftAssistedControlPlane{}, &OpenshiftAssistedControlPlaneList{})
}
