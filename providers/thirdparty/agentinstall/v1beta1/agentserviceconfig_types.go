package v1beta1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// AgentServiceConfigName is the one name an AgentServiceConfig may have:
// the infrastructure operator reconciles only "agent".
const AgentServiceConfigName = "agent"

// AgentServiceConfigSpec is the part of the infrastructure operator's
// configuration of assisted-service that the lab's service reads: the
// hub-wide mirror registry. Upstream's storage, OS image and must-gather
// fields configure what the lab does not deploy and are not modelled.
type AgentServiceConfigSpec struct {
	// MirrorRegistryRef names a ConfigMap in the operator's namespace with
	// keys registries.conf and ca-bundle.crt: release images are read
	// through its mirrors, discovery images of InfraEnvs without a
	// mirrorRegistryRef of their own get it, and so do the install-configs
	// of clusters without one.
	// +optional
	MirrorRegistryRef *corev1.LocalObjectReference `json:"mirrorRegistryRef,omitempty"`
	// UnauthenticatedRegistries are registries whose images need no pull
	// secret entry.
	// +optional
	UnauthenticatedRegistries []string `json:"unauthenticatedRegistries,omitempty"`
}

// AgentServiceConfig configures the hub's assisted service.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:path=agentserviceconfigs,scope=Cluster
type AgentServiceConfig struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec AgentServiceConfigSpec `json:"spec,omitempty"`
}

// AgentServiceConfigList is a list of AgentServiceConfigs.
//
// +kubebuilder:object:root=true
type AgentServiceConfigList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []AgentServiceConfig `json:"items"`
}

func init() {
	SchemeBuilder.Register(&AgentServiceConfig{}, &AgentServiceConfigList{})
}
