package v1beta1

import (
	hivev1 "github.com/openshift/hive/apis/hive/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// AgentClusterInstallSpec is the cluster assisted-service is asked to
// install from Agents.
type AgentClusterInstallSpec struct {
	// ClusterDeploymentRef is the hive ClusterDeployment (same namespace)
	// this install belongs to.
	ClusterDeploymentRef corev1.LocalObjectReference `json:"clusterDeploymentRef"`

	// ImageSetRef is the hive ClusterImageSet giving the release image.
	// +optional
	ImageSetRef *hivev1.ClusterImageSetReference `json:"imageSetRef,omitempty"`

	// ClusterMetadata (cluster ID, infra ID, admin credentials) is filled
	// in by assisted-service as the install completes; hive copies it to
	// the ClusterDeployment.
	// +optional
	ClusterMetadata *hivev1.ClusterMetadata `json:"clusterMetadata,omitempty"`

	// Networking of the installed cluster.
	Networking Networking `json:"networking"`

	// ProvisionRequirements say how many Agents must be ready before the
	// install starts.
	ProvisionRequirements ProvisionRequirements `json:"provisionRequirements"`

	// SSHPublicKey is added to every node for debugging.
	// +optional
	SSHPublicKey string `json:"sshPublicKey,omitempty"`

	// APIVIP is the single-stack API virtual IP (older field; see APIVIPs).
	// +optional
	APIVIP string `json:"apiVIP,omitempty"`
	// APIVIPs are the API virtual IPs, one per IP family.
	// +kubebuilder:validation:MaxItems=2
	// +optional
	APIVIPs []string `json:"apiVIPs,omitempty"`
	// IngressVIP is the single-stack ingress virtual IP (older field; see
	// IngressVIPs).
	// +optional
	IngressVIP string `json:"ingressVIP,omitempty"`
	// IngressVIPs are the ingress virtual IPs, one per IP family.
	// +kubebuilder:validation:MaxItems=2
	// +optional
	IngressVIPs []string `json:"ingressVIPs,omitempty"`

	// ControlPlane describes the control plane machine pool.
	// +optional
	ControlPlane *AgentMachinePool `json:"controlPlane,omitempty"`
	// Compute describes the compute machine pools.
	// +optional
	Compute []AgentMachinePool `json:"compute,omitempty"`

	// ManifestsConfigMapRef is a ConfigMap of extra install manifests;
	// ignored when ManifestsConfigMapRefs is set.
	// +optional
	ManifestsConfigMapRef *corev1.LocalObjectReference `json:"manifestsConfigMapRef,omitempty"`
	// ManifestsConfigMapRefs are ConfigMaps of extra install manifests.
	// +optional
	ManifestsConfigMapRefs []ManifestsConfigMapReference `json:"manifestsConfigMapRefs,omitempty"`

	// HoldInstallation keeps a ready cluster from starting to install.
	// +optional
	HoldInstallation bool `json:"holdInstallation,omitempty"`

	// IgnitionEndpoint is a custom endpoint hosts fetch their ignition from.
	// +optional
	IgnitionEndpoint *IgnitionEndpoint `json:"ignitionEndpoint,omitempty"`

	// DiskEncryption of the nodes' disks.
	// +optional
	DiskEncryption *DiskEncryption `json:"diskEncryption,omitempty"`

	// Proxy for the installed cluster.
	// +optional
	Proxy *Proxy `json:"proxy,omitempty"`

	// PlatformType of the installed cluster.
	// +optional
	PlatformType PlatformType `json:"platformType,omitempty"`

	// External configures the External platform.
	// +optional
	External *ExternalPlatformSpec `json:"external,omitempty"`

	// MastersSchedulable lets workloads run on control plane nodes.
	// +optional
	MastersSchedulable bool `json:"mastersSchedulable,omitempty"`

	// MirrorRegistryRef points at mirror registry configuration for the
	// cluster.
	// +optional
	MirrorRegistryRef *MirrorRegistryConfigMapReference `json:"mirrorRegistryRef,omitempty"`

	// LoadBalancer says who runs the API and ingress load balancer.
	// +optional
	LoadBalancer *LoadBalancer `json:"loadBalancer,omitempty"`
}

// ClusterProgressInfo is the installation progress of the cluster.
type ClusterProgressInfo struct {
	// TotalPercentage estimates overall progress.
	TotalPercentage int64 `json:"totalPercentage"`
}

// DebugInfo holds the service-side state of the cluster and debugging
// links.
type DebugInfo struct {
	// State is the assisted-service cluster state, see the ClusterState
	// constants.
	// +optional
	State string `json:"state,omitempty"`
	// StateInfo explains State.
	// +optional
	StateInfo string `json:"stateInfo,omitempty"`
	// EventsURL serves the cluster's events.
	// +optional
	EventsURL string `json:"eventsURL"`
	// LogsURL serves the collected installation logs.
	// +optional
	LogsURL string `json:"logsURL"`
}

// AgentClusterInstallStatus is what assisted-service reports about the
// install.
type AgentClusterInstallStatus struct {
	// Conditions: SpecSynced, Validated, RequirementsMet, Completed,
	// Failed, Stopped, LastInstallationPreparationFailed.
	// +optional
	Conditions []hivev1.ClusterInstallCondition `json:"conditions,omitempty"`
	// DebugInfo holds the service-side state and debugging links.
	// +optional
	DebugInfo DebugInfo `json:"debugInfo"`
	// Progress of the installation.
	// +optional
	Progress ClusterProgressInfo `json:"progress,omitempty"`

	// ControlPlaneAgentsDiscovered counts control plane Agents bound.
	// +optional
	ControlPlaneAgentsDiscovered int `json:"controlPlaneAgentsDiscovered,omitempty"`
	// ControlPlaneAgentsReady counts bound control plane Agents ready.
	// +optional
	ControlPlaneAgentsReady int `json:"controlPlaneAgentsReady,omitempty"`
	// WorkerAgentsDiscovered counts worker Agents bound.
	// +optional
	WorkerAgentsDiscovered int `json:"workerAgentsDiscovered,omitempty"`
	// WorkerAgentsReady counts bound worker Agents ready.
	// +optional
	WorkerAgentsReady int `json:"workerAgentsReady,omitempty"`

	// ConnectivityMajorityGroups is JSON describing which hosts reach
	// each other.
	// +optional
	ConnectivityMajorityGroups string `json:"connectivityMajorityGroups,omitempty"`
	// MachineNetwork in effect.
	// +optional
	MachineNetwork []MachineNetworkEntry `json:"machineNetwork,omitempty"`
	// APIVIP in effect.
	// +optional
	APIVIP string `json:"apiVIP,omitempty"`
	// APIVIPs in effect.
	// +kubebuilder:validation:MaxItems=2
	// +optional
	APIVIPs []string `json:"apiVIPs,omitempty"`
	// IngressVIP in effect.
	// +optional
	IngressVIP string `json:"ingressVIP,omitempty"`
	// IngressVIPs in effect.
	// +kubebuilder:validation:MaxItems=2
	// +optional
	IngressVIPs []string `json:"ingressVIPs,omitempty"`
	// UserManagedNetworking in effect.
	// +optional
	UserManagedNetworking *bool `json:"userManagedNetworking,omitempty"`
	// PlatformType in effect.
	// +optional
	PlatformType PlatformType `json:"platformType,omitempty"`
	// ValidationsInfo holds the cluster validation results by category.
	// +optional
	ValidationsInfo ValidationsStatus `json:"validationsInfo,omitempty"`
}

// AgentClusterInstall asks assisted-service to install the cluster of a
// hive ClusterDeployment from Agents.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:path=agentclusterinstalls,shortName=aci,scope=Namespaced
// +kubebuilder:printcolumn:name="Cluster",type="string",JSONPath=".spec.clusterDeploymentRef.name",description="ClusterDeployment being installed"
// +kubebuilder:printcolumn:name="State",type="string",JSONPath=".status.debugInfo.state",description="assisted-service cluster state"
// +kubebuilder:printcolumn:name="Progress",type="integer",JSONPath=".status.progress.totalPercentage",description="Installation progress in percent",priority=1
type AgentClusterInstall struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   AgentClusterInstallSpec   `json:"spec"`
	Status AgentClusterInstallStatus `json:"status,omitempty"`
}

// AgentClusterInstallList is a list of AgentClusterInstalls.
//
// +kubebuilder:object:root=true
type AgentClusterInstallList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []AgentClusterInstall `json:"items"`
}

func init() {
	SchemeBuilder.Register(&AgentClusterInstall{}, &AgentClusterInstallList{})
}
