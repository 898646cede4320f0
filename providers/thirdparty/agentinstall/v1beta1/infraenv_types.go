package v1beta1

import (
	conditionsv1 "github.com/openshift/custom-resource-status/conditions/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// IPXEScriptType selects which iPXE script assisted-service serves for an
// InfraEnv.
// +kubebuilder:validation:Enum="";DiscoveryImageAlways;BootOrderControl
type IPXEScriptType string

const (
	// IPXEDiscoveryImageAlways always boots the discovery image.
	IPXEDiscoveryImageAlways IPXEScriptType = "DiscoveryImageAlways"
	// IPXEBootOrderControl boots the installed disk once the host's Agent
	// is installed and bound, the discovery image otherwise.
	IPXEBootOrderControl IPXEScriptType = "BootOrderControl"
)

// ImageType is the flavour of discovery ISO to build.
type ImageType string

const (
	// ImageTypeFullISO embeds the whole RHCOS root file system.
	ImageTypeFullISO ImageType = "full-iso"
	// ImageTypeMinimalISO downloads the root file system at boot.
	ImageTypeMinimalISO ImageType = "minimal-iso"
)

// KernelArgument is one change to the discovery image's kernel command line.
type KernelArgument struct {
	// Operation is what to do with Value.
	// +kubebuilder:validation:Enum=append;replace;delete
	// +optional
	Operation string `json:"operation,omitempty"`
	// Value is a "param" or "param=value" kernel argument.
	// +kubebuilder:validation:Pattern=`^(?:(?:[^ \t\n\r"]+)|(?:"[^"]*"))+$`
	// +optional
	Value string `json:"value,omitempty"`
}

// InfraEnvSpec describes the discovery environment hosts boot into.
type InfraEnvSpec struct {
	// ClusterRef binds every Agent of this InfraEnv to one
	// ClusterDeployment (early binding). Empty means late binding.
	// +optional
	ClusterRef *ClusterReference `json:"clusterRef,omitempty"`

	// PullSecretRef is the Secret (in the InfraEnv's namespace) holding the
	// pull secret for the discovery image.
	PullSecretRef *corev1.LocalObjectReference `json:"pullSecretRef"`

	// SSHAuthorizedKey is added to the discovery image for debugging.
	// +optional
	SSHAuthorizedKey string `json:"sshAuthorizedKey,omitempty"`

	// Proxy is used by discovered hosts and installed clusters.
	// +optional
	Proxy *Proxy `json:"proxy,omitempty"`

	// AdditionalNTPSources are extra NTP servers for the hosts.
	// +optional
	AdditionalNTPSources []string `json:"additionalNTPSources,omitempty"`

	// NMStateConfigLabelSelector picks the NMStateConfigs whose static
	// network settings go into the discovery image.
	// +optional
	NMStateConfigLabelSelector metav1.LabelSelector `json:"nmStateConfigLabelSelector,omitempty"`

	// CPUArchitecture of the discovery image, e.g. x86_64 or aarch64.
	// +kubebuilder:default=x86_64
	// +optional
	CPUArchitecture string `json:"cpuArchitecture,omitempty"`

	// KernelArguments changes the discovery image's kernel command line.
	// +optional
	KernelArguments []KernelArgument `json:"kernelArguments,omitempty"`

	// AdditionalTrustBundle is a PEM bundle trusted by discovered hosts and
	// the clusters installed from them.
	// +optional
	AdditionalTrustBundle string `json:"additionalTrustBundle,omitempty"`

	// OSImageVersion picks the OS image (from AgentServiceConfig) for the
	// discovery image; not allowed together with ClusterRef.
	// +optional
	OSImageVersion string `json:"osImageVersion,omitempty"`

	// AgentLabels are put on every Agent created from this InfraEnv.
	// +optional
	AgentLabels map[string]string `json:"agentLabels,omitempty"`

	// IgnitionConfigOverride is a JSON ignition merged into the discovery
	// ignition.
	// +optional
	IgnitionConfigOverride string `json:"ignitionConfigOverride,omitempty"`

	// ImageType selects a full or minimal discovery ISO.
	// +kubebuilder:validation:Enum=full-iso;minimal-iso
	// +optional
	ImageType ImageType `json:"imageType,omitempty"`

	// IPXEScriptType selects the iPXE script served for this InfraEnv.
	// +kubebuilder:default=DiscoveryImageAlways
	// +optional
	IPXEScriptType IPXEScriptType `json:"ipxeScriptType"`

	// MirrorRegistryRef points at mirror registry configuration for the
	// discovery image.
	// +optional
	MirrorRegistryRef *MirrorRegistryConfigMapReference `json:"mirrorRegistryRef,omitempty"`
}

// BootArtifacts are the URLs a host can boot the discovery image from
// without the ISO.
type BootArtifacts struct {
	// InitrdURL serves the initrd.
	// +optional
	InitrdURL string `json:"initrd"`
	// RootfsURL serves the root file system image.
	// +optional
	RootfsURL string `json:"rootfs"`
	// KernelURL serves the kernel.
	// +optional
	KernelURL string `json:"kernel"`
	// IPXEScriptURL serves the iPXE script.
	// +optional
	IPXEScriptURL string `json:"ipxeScript"`
	// DiscoveryIgnitionURL serves the discovery ignition on its own.
	// +optional
	DiscoveryIgnitionURL string `json:"discoveryIgnitionURL"`
}

// InfraEnvDebugInfo holds links useful when debugging an InfraEnv.
type InfraEnvDebugInfo struct {
	// EventsURL serves the InfraEnv's events.
	// +optional
	EventsURL string `json:"eventsURL"`
	// StaticNetworkDownloadURL serves the static network configuration
	// built from the selected NMStateConfigs.
	// +optional
	StaticNetworkDownloadURL string `json:"staticNetworkDownloadURL,omitempty"`
}

// InfraEnvStatus is what assisted-service reports about an InfraEnv.
type InfraEnvStatus struct {
	// ISODownloadURL serves the discovery ISO.
	// +optional
	ISODownloadURL string `json:"isoDownloadURL,omitempty"`
	// CreatedTime is when the current discovery image was generated.
	// +optional
	CreatedTime *metav1.Time `json:"createdTime,omitempty"`
	// Conditions, notably ImageCreated.
	// +optional
	Conditions []conditionsv1.Condition `json:"conditions,omitempty"`
	// AgentLabelSelector selects the Agents that booted this InfraEnv.
	// +optional
	AgentLabelSelector metav1.LabelSelector `json:"agentLabelSelector,omitempty"`
	// DebugInfo holds debugging links.
	// +optional
	DebugInfo InfraEnvDebugInfo `json:"debugInfo"`
	// BootArtifacts are the URLs for network boot.
	// +optional
	BootArtifacts BootArtifacts `json:"bootArtifacts"`
}

// InfraEnv is a discovery environment: the image hosts boot to register
// with assisted-service as Agents.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:path=infraenvs,scope=Namespaced
// +kubebuilder:printcolumn:name="ISO Created At",type="string",JSONPath=".status.createdTime",description="When the discovery image was generated"
// +kubebuilder:printcolumn:name="ISO URL",type="string",JSONPath=".status.isoDownloadURL",description="Where to download the discovery ISO",priority=1
type InfraEnv struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   InfraEnvSpec   `json:"spec,omitempty"`
	Status InfraEnvStatus `json:"status,omitempty"`
}

// InfraEnvList is a list of InfraEnvs.
//
// +kubebuilder:object:root=true
type InfraEnvList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []InfraEnv `json:"items"`
}

func init() {
	SchemeBuilder.Register(&InfraEnv{}, &InfraEnvList{})
}
