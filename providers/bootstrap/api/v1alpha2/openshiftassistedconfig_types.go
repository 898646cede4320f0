package v1alpha2

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Condition types of OpenshiftAssistedConfig and their reasons.
const (
	// ReadyCondition summarises the config: True once the bootstrap data
	// Secret exists; Cluster API mirrors it into the Machine's
	// BootstrapConfigReady condition.
	ReadyCondition = "Ready"

	// InfraEnvReadyCondition is True when the Machine's InfraEnv exists and
	// assisted-service has built its discovery image.
	InfraEnvReadyCondition = "InfraEnvReady"
	// InfraEnvReadyReason: the discovery image is built.
	InfraEnvReadyReason = "InfraEnvReady"
	// WaitingForClusterDeploymentReason: the control plane has not created
	// the cluster's ClusterDeployment and AgentClusterInstall yet.
	WaitingForClusterDeploymentReason = "WaitingForClusterDeployment"
	// WaitingForInstallToAddHostsReason: a worker waits until the cluster
	// install is finished and accepts day-2 hosts (adding-hosts).
	WaitingForInstallToAddHostsReason = "WaitingForInstallToAddHosts"
	// WaitingForDiscoveryImageReason: the InfraEnv exists but its discovery
	// image is not built yet.
	WaitingForDiscoveryImageReason = "WaitingForDiscoveryImage"
	// DiscoveryImageFailedReason: assisted-service could not build the
	// discovery image; the message carries its error.
	DiscoveryImageFailedReason = "DiscoveryImageFailed"
	// InfraEnvConflictReason: an InfraEnv of the Machine's name exists that
	// this config does not own.
	InfraEnvConflictReason = "InfraEnvConflict"

	// DataSecretAvailableCondition is True when the bootstrap data Secret
	// exists and status.dataSecretName names it.
	DataSecretAvailableCondition = "DataSecretAvailable"
	// DataSecretAvailableReason: the Secret exists.
	DataSecretAvailableReason = "DataSecretAvailable"
	// WaitingForMachineReason: no Machine owns the config yet.
	WaitingForMachineReason = "WaitingForMachine"
	// WaitingForClusterInfrastructureReason: the Cluster's infrastructure
	// is not provisioned yet.
	WaitingForClusterInfrastructureReason = "WaitingForClusterInfrastructure"
	// WaitingForInfraEnvReason: the data waits for the InfraEnv's
	// discovery image.
	WaitingForInfraEnvReason = "WaitingForInfraEnv"
	// DiscoveryIgnitionUnavailableReason: the discovery ignition could not
	// be fetched from assisted-service; it is retried.
	DiscoveryIgnitionUnavailableReason = "DiscoveryIgnitionUnavailable"
	// DataSecretCreateFailedReason: writing the Secret failed.
	DataSecretCreateFailedReason = "DataSecretCreateFailed"

	// DeletingReason is used on conditions while the config is deleted.
	DeletingReason = "Deleting"
)

// Labels and annotations the bootstrap provider sets.
const (
	// ConfigLabel on an InfraEnv names the OpenshiftAssistedConfig that
	// owns it.
	ConfigLabel = "bootstrap.cluster.x-k8s.io/openshift-assisted-config"
)

// Formats of the bootstrap data, the Secret's "format" key.
const (
	// FormatIgnition is an ignition config (JSON).
	FormatIgnition = "ignition"
)

// OpenshiftAssistedConfigSpec says how the Machine's host boots into
// discovery and how it registers as a node. It maps onto the InfraEnv
// created for the Machine and onto the Agent that host becomes.
type OpenshiftAssistedConfigSpec struct {
	// pullSecretRef names a Secret (key .dockerconfigjson) with the pull
	// secret for the discovery image; when unset, the ClusterDeployment's
	// pull secret is used.
	// +optional
	PullSecretRef *corev1.LocalObjectReference `json:"pullSecretRef,omitempty"`

	// sshAuthorizedKey is added to the discovery image for debugging.
	// +optional
	// +kubebuilder:validation:MaxLength=4096
	SSHAuthorizedKey string `json:"sshAuthorizedKey,omitempty"`

	// additionalNTPSources are NTP servers (host names or addresses) added
	// to the hosts' configuration.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=32
	AdditionalNTPSources []string `json:"additionalNTPSources,omitempty"`

	// proxy is used by discovered hosts and the installed nodes.
	// +optional
	Proxy *Proxy `json:"proxy,omitempty"`

	// nmStateConfigLabelSelector selects NMStateConfigs whose static network
	// settings go into the discovery image.
	// +optional
	NMStateConfigLabelSelector metav1.LabelSelector `json:"nmStateConfigLabelSelector,omitempty"`

	// cpuArchitecture of the discovery image and the node.
	// +optional
	// +kubebuilder:default=x86_64
	// +kubebuilder:validation:Enum=x86_64;aarch64;arm64;ppc64le;s390x
	CPUArchitecture string `json:"cpuArchitecture,omitempty"`

	// kernelArguments change the kernel command line of the discovery
	// image and, through the installer arguments of the host's Agent, of
	// the installed system.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=64
	KernelArguments []KernelArgument `json:"kernelArguments,omitempty"`

	// additionalTrustBundle is a PEM bundle the hosts and the installed
	// cluster trust.
	// +optional
	AdditionalTrustBundle string `json:"additionalTrustBundle,omitempty"`

	// osImageVersion picks the discovery OS image by OpenShift version.
	// +optional
	OSImageVersion string `json:"osImageVersion,omitempty"`

	// nodeRegistration says how the host registers as a node.
	// +optional
	NodeRegistration NodeRegistrationOptions `json:"nodeRegistration,omitempty,omitzero"`
}

// Proxy is an HTTP(S) proxy configuration.
type Proxy struct {
	// httpProxy is the proxy URL for plain HTTP.
	// +optional
	HTTPProxy string `json:"httpProxy,omitempty"`
	// httpsProxy is the proxy URL for HTTPS.
	// +optional
	HTTPSProxy string `json:"httpsProxy,omitempty"`
	// noProxy is a comma-separated list of hosts, domains and CIDRs that
	// bypass the proxy.
	// +optional
	NoProxy string `json:"noProxy,omitempty"`
}

// KernelArgument is one change to the kernel command line.
type KernelArgument struct {
	// operation is what to do with value.
	// +optional
	// +kubebuilder:validation:Enum=append;replace;delete
	Operation string `json:"operation,omitempty"`
	// value is a "param" or "param=value" kernel argument.
	// +optional
	// +kubebuilder:validation:Pattern=`^(?:(?:[^ \t\n\r"]+)|(?:"[^"]*"))+$`
	Value string `json:"value,omitempty"`
}

// NodeRegistrationOptions say how the installed host registers as a node.
type NodeRegistrationOptions struct {
	// name is the host name the node gets; unset, the host keeps the name
	// it reports.
	// +optional
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name,omitempty"`

	// kubeletExtraLabels are "key=value" labels the kubelet registers the
	// node with. A value "$NAME" or "${NAME}" names a variable of the
	// node's config drive metadata (METADATA_<KEY>), resolved on the node
	// at boot: "metal3.io/uuid=$METADATA_UUID" is the label CAPM3 finds a
	// host's Node by.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=64
	KubeletExtraLabels []string `json:"kubeletExtraLabels,omitempty"`

	// providerID is the kubelet's provider ID, a value or a config drive
	// metadata variable as in kubeletExtraLabels. Unset, the node
	// registers without one and the infrastructure provider sets it
	// (CAPM3 finds the Node by its metal3.io/uuid label).
	// +optional
	// +kubebuilder:validation:MaxLength=512
	ProviderID string `json:"providerID,omitempty"`
}

// OpenshiftAssistedConfigInitializationStatus is the Cluster API contract's
// view of the config's initialization.
// +kubebuilder:validation:MinProperties=1
type OpenshiftAssistedConfigInitializationStatus struct {
	// dataSecretCreated is true once the bootstrap data Secret exists.
	// NOTE: part of the Cluster API contract; it gates Machine provisioning.
	// +optional
	DataSecretCreated *bool `json:"dataSecretCreated,omitempty"`
}

// OpenshiftAssistedConfigStatus is the observed state of a config.
type OpenshiftAssistedConfigStatus struct {
	// conditions: Ready, InfraEnvReady, DataSecretAvailable, Paused.
	// +optional
	// +listType=map
	// +listMapKey=type
	// +kubebuilder:validation:MaxItems=32
	Conditions []metav1.Condition `json:"conditions,omitempty"`

	// initialization is the Cluster API contract's initialization status.
	// +optional
	Initialization OpenshiftAssistedConfigInitializationStatus `json:"initialization,omitempty,omitzero"`

	// dataSecretName names the Secret holding the bootstrap data (the
	// discovery ignition).
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	DataSecretName string `json:"dataSecretName,omitempty"`

	// infraEnvName names the InfraEnv created for the Machine.
	// +optional
	// +kubebuilder:validation:MaxLength=253
	InfraEnvName string `json:"infraEnvName,omitempty"`

	// observedGeneration is the generation the status describes.
	// +optional
	// +kubebuilder:validation:Minimum=1
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
}

// OpenshiftAssistedConfig is the bootstrap configuration of one Machine: the
// provider creates an InfraEnv for the Machine, hands the Machine its
// discovery ignition as bootstrap data, and approves the Agent its host
// becomes.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:storageversion
// +kubebuilder:resource:path=openshiftassistedconfigs,scope=Namespaced,categories=cluster-api,shortName=oac;oacs
// +kubebuilder:metadata:labels="cluster.x-k8s.io/v1beta2=v1alpha2"
// +kubebuilder:printcolumn:name="Cluster",type="string",JSONPath=".metadata.labels['cluster\\.x-k8s\\.io/cluster-name']",description="Cluster"
// +kubebuilder:printcolumn:name="Data Secret Created",type="boolean",JSONPath=".status.initialization.dataSecretCreated",description="Whether the bootstrap data Secret exists"
// +kubebuilder:printcolumn:name="InfraEnv",type="string",JSONPath=".status.infraEnvName",description="InfraEnv of the Machine"
// +kubebuilder:printcolumn:name="Ready",type="string",JSONPath=".status.conditions[?(@.type==\"Ready\")].status",description="Ready condition"
// +kubebuilder:printcolumn:name="Age",type="date",JSONPath=".metadata.creationTimestamp"
type OpenshiftAssistedConfig struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   OpenshiftAssistedConfigSpec   `json:"spec,omitempty"`
	Status OpenshiftAssistedConfigStatus `json:"status,omitempty"`
}

// GetConditions returns the config's conditions.
func (c *OpenshiftAssistedConfig) GetConditions() []metav1.Condition {
	return c.Status.Conditions
}

// SetConditions replaces the config's conditions.
func (c *OpenshiftAssistedConfig) SetConditions(conditions []metav1.Condition) {
	c.Status.Conditions = conditions
}

// OpenshiftAssistedConfigList is a list of configs.
//
// +kubebuilder:object:root=true
type OpenshiftAssistedConfigList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []OpenshiftAssistedConfig `json:"items"`
}

func init() {
	SchemeBuilder.Register(&OpenshiftAssistedConfig{}, &OpenshiftAssistedConfigList{})
}
