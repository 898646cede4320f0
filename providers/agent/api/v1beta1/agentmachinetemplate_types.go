package v1beta1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// AgentMachineTemplateSpec holds the template AgentMachines are stamped
// from.
type AgentMachineTemplateSpec struct {
	Template AgentMachineTemplateResource `json:"template"`
}

// AgentMachineTemplateResource is the part of an AgentMachine a template
// fixes: its spec.
type AgentMachineTemplateResource struct {
	// Spec is copied into each AgentMachine made from the template.
	Spec AgentMachineSpec `json:"spec"`
}

// AgentMachineTemplate is the infrastructure template MachineDeployments and
// MachineSets of the agent provider refer to; HyperShift writes one per
// NodePool, carrying the NodePool's Agent label selector.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:path=agentmachinetemplates,scope=Namespaced,categories=cluster-api,shortName=agentmt
// +kubebuilder:storageversion
// +kubebuilder:metadata:labels="cluster.x-k8s.io/v1beta1=v1beta1"
type AgentMachineTemplate struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec AgentMachineTemplateSpec `json:"spec,omitempty"`
}

// AgentMachineTemplateList is a list of AgentMachineTemplates.
//
// +kubebuilder:object:root=true
type AgentMachineTemplateList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []AgentMachineTemplate `json:"items"`
}

func init() {
	SchemeBuilder.Register(&AgentMachineTemplate{}, &AgentMachineTemplateList{})
}
