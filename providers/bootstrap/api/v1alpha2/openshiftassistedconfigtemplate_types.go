package v1alpha2

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
)

// OpenshiftAssistedConfigTemplateSpec holds the template.
type OpenshiftAssistedConfigTemplateSpec struct {
	// template is stamped into one OpenshiftAssistedConfig per Machine.
	Template OpenshiftAssistedConfigTemplateResource `json:"template"`
}

// OpenshiftAssistedConfigTemplateResource is the metadata and spec of the
// configs made from a template.
type OpenshiftAssistedConfigTemplateResource struct {
	// metadata is put on each config.
	// +optional
	ObjectMeta clusterv1.ObjectMeta `json:"metadata,omitempty,omitzero"`
	// spec of each config.
	// +optional
	Spec OpenshiftAssistedConfigSpec `json:"spec,omitempty"`
}

// OpenshiftAssistedConfigTemplate is what MachineDeployments and
// MachineSets reference to give each of their Machines an
// OpenshiftAssistedConfig.
//
// +kubebuilder:object:root=true
// +kubebuilder:storageversion
// +kubebuilder:resource:path=openshiftassistedconfigtemplates,scope=Namespaced,categories=cluster-api,shortName=oact
// +kubebuilder:metadata:labels="cluster.x-k8s.io/v1beta2=v1alpha2"
// +kubebuilder:printcolumn:name="Age",type="date",JSONPath=".metadata.creationTimestamp"
type OpenshiftAssistedConfigTemplate struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec OpenshiftAssistedConfigTemplateSpec `json:"spec,omitempty"`
}

// OpenshiftAssistedConfigTemplateList is a list of templates.
//
// +kubebuilder:object:root=true
type OpenshiftAssistedConfigTemplateList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []OpenshiftAssistedConfigTemplate `json:"items"`
}

func init() {
	SchemeBuilder.Register(&OpenshiftAssistedConfigTemplate{}, &OpenshiftAssistedConfigTemplateList{})
}
