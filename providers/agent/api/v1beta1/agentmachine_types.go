package v1beta1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	capierrors "sigs.k8s.io/cluster-api/errors"
)

// AgentMachineSpec is what a Machine's infrastructure asks for: which Agents
// may back it, and, once one does, the Node it becomes.
type AgentMachineSpec struct {
	// AgentLabelSelector restricts the Agents the provider may bind to this
	// Machine to those whose labels match. Unset, any eligible Agent will do.
	// +optional
	AgentLabelSelector *metav1.LabelSelector `json:"agentLabelSelector,omitempty"`

	// ProviderID is set by the provider once an Agent is bound:
	// "agent://" followed by the Agent's name (the host's UUID). Cluster API
	// matches it against the Node's spec.providerID.
	ProviderID *string `json:"providerID,omitempty"`
}

// AgentReference names the Agent bound to an AgentMachine.
type AgentReference struct {
	// Name of the Agent.
	// +optional
	Name string `json:"name,omitempty"`
	// Namespace of the Agent.
	// +optional
	Namespace string `json:"namespace,omitempty"`
}

// AgentMachineStatus is what the provider observed of an AgentMachine and
// its Agent.
type AgentMachineStatus struct {
	// Ready is true when the bound Agent is reserved, synced, validated,
	// meets its requirements and is installed: the Ready condition's status
	// (Cluster API v1beta1 contract: infrastructure provisioned).
	// +optional
	Ready bool `json:"ready"`

	// AgentRef names the Agent bound to this Machine.
	AgentRef *AgentReference `json:"agentRef,omitempty"`

	// Addresses are the bound host's addresses, which Cluster API copies to
	// the Machine.
	Addresses []clusterv1.MachineAddress `json:"addresses,omitempty"`

	// FailureReason is a machine-readable code for a terminal problem that
	// needs someone to act, such as an invalid spec; transient errors are not
	// reported here. Part of the Cluster API v1beta1 contract.
	// +optional
	FailureReason *capierrors.MachineStatusError `json:"failureReason,omitempty"`

	// FailureMessage explains FailureReason to a person.
	// +optional
	FailureMessage *string `json:"failureMessage,omitempty"`

	// Conditions are the provider's observations of the AgentMachine; the
	// types and reasons are in conditions.go.
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// AgentMachine is the Cluster API infrastructure machine of the agent
// provider: it binds one Agent (a discovered host) to a Machine and reports
// the host's progress through installation.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:path=agentmachines,scope=Namespaced
// +kubebuilder:subresource:status
// +kubebuilder:storageversion
// +kubebuilder:metadata:labels="cluster.x-k8s.io/v1beta1=v1beta1"
type AgentMachine struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   AgentMachineSpec   `json:"spec,omitempty"`
	Status AgentMachineStatus `json:"status,omitempty"`
}

// GetConditions returns the AgentMachine's conditions, for Cluster API's
// condition helpers (sigs.k8s.io/cluster-api/util/conditions).
func (m *AgentMachine) GetConditions() []metav1.Condition {
	return m.Status.Conditions
}

// SetConditions replaces the AgentMachine's conditions, for Cluster API's
// condition helpers.
func (m *AgentMachine) SetConditions(conditions []metav1.Condition) {
	m.Status.Conditions = conditions
}

// AgentMachineList is a list of AgentMachines.
//
// +kubebuilder:object:root=true
type AgentMachineList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []AgentMachine `json:"items"`
}

func init() {
	SchemeBuilder.Register(&AgentMachine{}, &AgentMachineList{})
}
