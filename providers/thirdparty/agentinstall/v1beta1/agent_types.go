package v1beta1

import (
	conditionsv1 "github.com/openshift/custom-resource-status/conditions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// HostRole is the role a host takes in its cluster.
type HostRole string

// HostStage is a step of a host's installation, as shown in
// status.progress.currentStage.
type HostStage string

// SourceState is how a host's NTP source is doing.
type SourceState string

// IgnitionEndpointTokenReference points at a Secret holding the bearer
// token used to fetch the host's ignition from a custom endpoint.
type IgnitionEndpointTokenReference struct {
	// Namespace of the Secret.
	Namespace string `json:"namespace"`
	// Name of the Secret.
	Name string `json:"name"`
}

// AgentSpec is what the user (or a controller) asks of a discovered host.
type AgentSpec struct {
	// ClusterDeploymentName binds the Agent to a ClusterDeployment; empty
	// means unbound.
	// +optional
	ClusterDeploymentName *ClusterReference `json:"clusterDeploymentName,omitempty"`
	// Role requested for the host; "auto-assign" lets the service choose.
	Role HostRole `json:"role"`
	// Hostname requested for the host.
	// +optional
	Hostname string `json:"hostname,omitempty"`
	// Approved must be true before the host is installed.
	Approved bool `json:"approved"`
	// InstallationDiskID picks the installation disk by inventory disk ID.
	// +optional
	InstallationDiskID string `json:"installation_disk_id,omitempty"`
	// InstallationDiskPath picks the installation disk by its by-id or
	// by-path link.
	// +optional
	InstallationDiskPath string `json:"installation_disk_path,omitempty"`
	// InstallerArgs is a JSON array of extra coreos-installer arguments.
	// +optional
	InstallerArgs string `json:"installerArgs,omitempty"`
	// IgnitionConfigOverrides is a JSON ignition merged into the host's.
	// +optional
	IgnitionConfigOverrides string `json:"ignitionConfigOverrides,omitempty"`
	// MachineConfigPool the node joins.
	// +optional
	MachineConfigPool string `json:"machineConfigPool,omitempty"`
	// NodeLabels are applied to the Node this host becomes.
	// +optional
	NodeLabels map[string]string `json:"nodeLabels,omitempty"`
	// IgnitionEndpointTokenReference points at the token for fetching the
	// ignition from the cluster's custom ignition endpoint.
	// +optional
	IgnitionEndpointTokenReference *IgnitionEndpointTokenReference `json:"ignitionEndpointTokenReference,omitempty"`
	// IgnitionEndpointHTTPHeaders are extra headers sent when fetching the
	// ignition.
	// +optional
	IgnitionEndpointHTTPHeaders map[string]string `json:"ignitionEndpointHTTPHeaders,omitempty"`
}

// HostProgressInfo tracks a host's installation.
type HostProgressInfo struct {
	// CurrentStage is the stage the host is in.
	// +optional
	CurrentStage HostStage `json:"currentStage,omitempty"`
	// ProgressStages lists, in order, the stages this host goes through.
	// +optional
	ProgressStages []HostStage `json:"progressStages,omitempty"`
	// ProgressInfo details the current stage.
	// +optional
	ProgressInfo string `json:"progressInfo,omitempty"`
	// InstallationPercentage estimates overall progress.
	// +optional
	InstallationPercentage int64 `json:"installationPercentage,omitempty"`
	// StageStartTime is when the current stage began.
	// +optional
	StageStartTime *metav1.Time `json:"stageStartTime,omitempty"`
	// StageUpdateTime is when the current stage last reported.
	// +optional
	StageUpdateTime *metav1.Time `json:"stageUpdateTime,omitempty"`
}

// HostNTPSource is one NTP source a host sees.
type HostNTPSource struct {
	// SourceName is the server name or address.
	// +optional
	SourceName string `json:"sourceName,omitempty"`
	// SourceState is how the source is doing.
	// +optional
	SourceState SourceState `json:"sourceState,omitempty"`
}

// AgentDebugInfo holds the service-side state of a host and debugging links.
type AgentDebugInfo struct {
	// State is the assisted-service host state, see the AgentState
	// constants.
	// +optional
	State string `json:"state,omitempty"`
	// StateInfo explains State.
	// +optional
	StateInfo string `json:"stateInfo,omitempty"`
	// EventsURL serves the host's events.
	// +optional
	EventsURL string `json:"eventsURL,omitempty"`
	// LogsURL serves the host's collected logs.
	// +optional
	LogsURL string `json:"logsURL,omitempty"`
}

// AgentDeprovisionInfo remembers the cluster an Agent was last bound to, so
// it can be cleaned up when the Agent registers again.
type AgentDeprovisionInfo struct {
	// ClusterName is the former ClusterDeployment's name.
	// +optional
	ClusterName string `json:"cluster_name,omitempty"`
	// ClusterNamespace is the former ClusterDeployment's namespace.
	// +optional
	ClusterNamespace string `json:"cluster_namespace,omitempty"`
	// NodeName is the Node the host was.
	// +optional
	NodeName string `json:"node_name,omitempty"`
	// Message describes the deprovisioning.
	// +optional
	Message string `json:"message,omitempty"`
}

// CSRType is the kind of certificate signing request approved for a host.
type CSRType string

const (
	// CSRTypeClient is a kubelet client certificate request.
	CSRTypeClient CSRType = "client"
	// CSRTypeServing is a kubelet serving certificate request.
	CSRTypeServing CSRType = "serving"
)

// CSRInfo records one approved certificate signing request.
type CSRInfo struct {
	// Name of the CertificateSigningRequest.
	Name string `json:"name"`
	// Type of the request.
	Type CSRType `json:"type"`
	// ApprovedAt is when it was approved.
	ApprovedAt metav1.Time `json:"approvedAt"`
}

// CSRStatus tracks the certificate signing requests approved for a host.
type CSRStatus struct {
	// ApprovedCSRs are the requests approved so far.
	// +optional
	ApprovedCSRs []CSRInfo `json:"approvedCSRs,omitempty"`
	// LastApprovalAttempt is when approval was last tried.
	// +optional
	LastApprovalAttempt metav1.Time `json:"lastApprovalAttempt,omitempty"`
}

// AgentStatus is what assisted-service reports about a host.
type AgentStatus struct {
	// Role the host actually has.
	// +optional
	Role HostRole `json:"role"`
	// Bootstrap is true for the host that bootstraps the cluster.
	// +optional
	Bootstrap bool `json:"bootstrap,omitempty"`
	// Kind is "Host" for a new cluster or "AddToExistingClusterHost" for a
	// day-2 host.
	// +optional
	Kind string `json:"kind,omitempty"`
	// Inventory is the hardware the host reported.
	// +optional
	Inventory HostInventory `json:"inventory,omitempty"`
	// Progress of the installation.
	// +optional
	Progress HostProgressInfo `json:"progress,omitempty"`
	// NTPSources the host sees.
	// +optional
	NTPSources []HostNTPSource `json:"ntpSources,omitempty"`
	// Conditions: SpecSynced, Connected, RequirementsMet, Validated,
	// Installed, Bound, Cleanup.
	// +optional
	Conditions []conditionsv1.Condition `json:"conditions,omitempty"`
	// DebugInfo holds the service-side state and debugging links.
	// +optional
	DebugInfo AgentDebugInfo `json:"debugInfo"`
	// ValidationsInfo holds the host validation results by category.
	// +optional
	ValidationsInfo ValidationsStatus `json:"validationsInfo,omitempty"`
	// InstallationDiskID is the disk the OS is or will be installed on.
	// +optional
	InstallationDiskID string `json:"installation_disk_id,omitempty"`
	// DeprovisionInfo remembers the previous cluster binding.
	// +optional
	DeprovisionInfo *AgentDeprovisionInfo `json:"deprovision_info,omitempty"`
	// CSRStatus tracks certificate signing requests approved for the host.
	// +optional
	CSRStatus CSRStatus `json:"csrStatus,omitempty"`
}

// Agent is a host that booted an InfraEnv's discovery image and registered
// with assisted-service.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:path=agents,scope=Namespaced
// +kubebuilder:printcolumn:name="Cluster",type="string",JSONPath=".spec.clusterDeploymentName.name",description="ClusterDeployment the Agent is bound to"
// +kubebuilder:printcolumn:name="Approved",type="boolean",JSONPath=".spec.approved",description="Whether the Agent may be installed"
// +kubebuilder:printcolumn:name="Role",type="string",JSONPath=".status.role",description="Role of the host"
// +kubebuilder:printcolumn:name="Stage",type="string",JSONPath=".status.progress.currentStage",description="Installation stage"
// +kubebuilder:printcolumn:name="State",type="string",JSONPath=".status.debugInfo.state",description="assisted-service host state",priority=1
// +kubebuilder:printcolumn:name="Hostname",type="string",JSONPath=".status.inventory.hostname",description="Hostname the host reports",priority=1
// +kubebuilder:printcolumn:name="Requested Hostname",type="string",JSONPath=".spec.hostname",description="Hostname asked for in the spec",priority=1
type Agent struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   AgentSpec   `json:"spec,omitempty"`
	Status AgentStatus `json:"status,omitempty"`
}

// AgentList is a list of Agents.
//
// +kubebuilder:object:root=true
type AgentList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Agent `json:"items"`
}

func init() {
	SchemeBuilder.Register(&Agent{}, &AgentList{})
}
