package v1beta1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
)

// AgentClusterSpec is what the owner of an AgentCluster asks for: where the
// hosted control plane answers and where its hosts fetch their Ignition.
type AgentClusterSpec struct {
	// IgnitionEndpoint is where hosts joining the cluster fetch their
	// Ignition config, copied into the AgentClusterInstall the provider
	// creates. Unset, hosts get the config assisted-service serves.
	// +optional
	IgnitionEndpoint *IgnitionEndpoint `json:"ignitionEndpoint,omitempty"`

	// ControlPlaneEndpoint is the host and port of the cluster's API server
	// (the Cluster API InfraCluster contract field). The JSON key is always
	// written, as upstream's is.
	// +optional
	ControlPlaneEndpoint clusterv1.APIEndpoint `json:"controlPlaneEndpoint"`
}

// IgnitionEndpoint locates an Ignition server other than assisted-service's
// own.
type IgnitionEndpoint struct {
	// Url is the Ignition server's URL. The provider copies it into the
	// AgentClusterInstall without its path; assisted-service then appends
	// each host's machine config pool. (Url, not URL: upstream's Go name.)
	// +optional
	Url string `json:"url,omitempty"`

	// CaCertificateReference names the Secret holding the CA bundle that
	// verifies the Ignition server's TLS certificate.
	// +optional
	CaCertificateReference *CaCertificateReference `json:"caCertificateReference,omitempty"`
}

// CaCertificateReference names a Secret holding a CA certificate.
type CaCertificateReference struct {
	// Namespace of the Secret.
	Namespace string `json:"namespace"`
	// Name of the Secret.
	Name string `json:"name"`
}

// ClusterDeploymentReference names the Hive ClusterDeployment that stands for
// an AgentCluster towards assisted-service.
type ClusterDeploymentReference struct {
	// Name of the ClusterDeployment.
	// +optional
	Name string `json:"name,omitempty"`
	// Namespace of the ClusterDeployment.
	// +optional
	Namespace string `json:"namespace,omitempty"`
}

// AgentClusterStatus is what the provider observed of an AgentCluster.
type AgentClusterStatus struct {
	// Ready is true once the ClusterDeployment and its AgentClusterInstall
	// exist and the control plane endpoint has a host and a port (Cluster
	// API v1beta1 contract: infrastructure provisioned). The provider does
	// not set it back to false.
	// +optional
	Ready bool `json:"ready"`

	// ClusterDeploymentRef names the ClusterDeployment the provider created
	// or adopted for this cluster. Agents bound to the cluster's Machines
	// point at it.
	ClusterDeploymentRef ClusterDeploymentReference `json:"clusterDeploymentReference"`

	// Conditions are the provider's observations of the AgentCluster.
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`

	// FailureDomains are the failure domains the cluster's Machines may be
	// spread over; the agent provider reports none.
	// +optional
	// +listType=map
	// +listMapKey=name
	FailureDomains []clusterv1.FailureDomain `json:"failureDomains,omitempty"`
}

// AgentCluster is the Cluster API infrastructure cluster of the agent
// provider: it owns the ClusterDeployment, and has the AgentClusterInstall
// created, through which assisted-service adds hosts to an existing
// (typically hosted) control plane.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:path=agentclusters,scope=Namespaced
// +kubebuilder:subresource:status
// +kubebuilder:storageversion
// +kubebuilder:metadata:labels="cluster.x-k8s.io/v1beta1=v1beta1"
type AgentCluster struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   AgentClusterSpec   `json:"spec,omitempty"`
	Status AgentClusterStatus `json:"status,omitempty"`
}

// AgentClusterList is a list of AgentClusters.
//
// +kubebuilder:object:root=true
type AgentClusterList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []AgentCluster `json:"items"`
}

func init() {
	SchemeBuilder.Register(&AgentCluster{}, &AgentClusterList{})
}
