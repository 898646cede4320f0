package v1beta1

// Networking is the network layout of the installed cluster.
type Networking struct {
	// MachineNetwork are the node address ranges.
	// +optional
	MachineNetwork []MachineNetworkEntry `json:"machineNetwork,omitempty"`
	// ClusterNetwork are the pod address ranges.
	// +optional
	ClusterNetwork []ClusterNetworkEntry `json:"clusterNetwork,omitempty"`
	// ServiceNetwork are the service address ranges (CIDRs).
	// +optional
	ServiceNetwork []string `json:"serviceNetwork,omitempty"`
	// NetworkType is the CNI plug-in.
	// +kubebuilder:validation:Enum=OpenShiftSDN;OVNKubernetes
	// +optional
	NetworkType string `json:"networkType,omitempty"`
	// UserManagedNetworking means the user provides load balancing and
	// DNS; single-node clusters use it.
	// +optional
	UserManagedNetworking *bool `json:"userManagedNetworking,omitempty"`
}

// MachineNetworkEntry is one node address range.
type MachineNetworkEntry struct {
	// CIDR of the range.
	CIDR string `json:"cidr"`
}

// ClusterNetworkEntry is one pod address range.
type ClusterNetworkEntry struct {
	// CIDR of the range.
	CIDR string `json:"cidr"`
	// HostPrefix is the prefix length of each node's share of CIDR.
	// +optional
	HostPrefix int32 `json:"hostPrefix,omitempty"`
}

// ProvisionRequirements say when the install may start.
type ProvisionRequirements struct {
	// ControlPlaneAgents is how many approved, ready control plane Agents
	// are needed (1 for single-node, otherwise 3 or more).
	ControlPlaneAgents int `json:"controlPlaneAgents"`
	// WorkerAgents is the minimum number of approved, ready worker Agents.
	// +kubebuilder:validation:Minimum=0
	// +optional
	WorkerAgents int `json:"workerAgents,omitempty"`
}

// HyperthreadingMode turns simultaneous multithreading on or off.
// +kubebuilder:validation:Enum="";Enabled;Disabled
type HyperthreadingMode string

const (
	HyperthreadingEnabled  HyperthreadingMode = "Enabled"
	HyperthreadingDisabled HyperthreadingMode = "Disabled"
)

// AgentMachinePool describes a pool of machines.
type AgentMachinePool struct {
	// Name is "master" for the control plane and "worker" for compute.
	Name string `json:"name"`
	// Hyperthreading of the pool's machines.
	// +kubebuilder:default=Enabled
	// +optional
	Hyperthreading HyperthreadingMode `json:"hyperthreading,omitempty"`
}

// PlatformType is the infrastructure the cluster is installed on.
// +kubebuilder:validation:Enum="";BareMetal;None;VSphere;Nutanix;External
type PlatformType string

const (
	PlatformTypeBareMetal PlatformType = "BareMetal"
	PlatformTypeNone      PlatformType = "None"
	PlatformTypeVSphere   PlatformType = "VSphere"
	PlatformTypeNutanix   PlatformType = "Nutanix"
	PlatformTypeExternal  PlatformType = "External"
)

// CloudControllerManager says whether an external cloud controller manager
// runs.
type CloudControllerManager string

const (
	CloudControllerManagerNone     CloudControllerManager = ""
	CloudControllerManagerExternal CloudControllerManager = "External"
)

// ExternalPlatformSpec configures the External platform.
type ExternalPlatformSpec struct {
	// PlatformName names the infrastructure provider, for information only.
	// +kubebuilder:default:="Unknown"
	// +optional
	PlatformName string `json:"platformName,omitempty"`
	// CloudControllerManager selects an external cloud controller manager.
	// +kubebuilder:validation:Enum="";External
	// +optional
	CloudControllerManager CloudControllerManager `json:"cloudControllerManager,omitempty"`
}

// IgnitionEndpoint is a custom server hosts fetch their ignition from.
type IgnitionEndpoint struct {
	// URL of the endpoint.
	// +optional
	URL string `json:"url,omitempty"`
	// CaCertificateReference points at the CA to trust for the endpoint.
	// +optional
	CaCertificateReference *CaCertificateReference `json:"caCertificateReference,omitempty"`
}

// CaCertificateReference points at a Secret holding a CA certificate.
type CaCertificateReference struct {
	// Namespace of the Secret.
	Namespace string `json:"namespace"`
	// Name of the Secret.
	Name string `json:"name"`
}

// DiskEncryption configures node disk encryption.
type DiskEncryption struct {
	// EnableOn selects the nodes: none, all, masters or workers.
	// +kubebuilder:default=none
	// +kubebuilder:validation:Enum=none;all;masters;workers
	// +optional
	EnableOn *string `json:"enableOn,omitempty"`
	// Mode is tpmv2 or tang.
	// +kubebuilder:validation:Enum=tpmv2;tang
	// +optional
	Mode *string `json:"mode,omitempty"`
	// TangServers is JSON describing the tang servers.
	// +optional
	TangServers string `json:"tangServers,omitempty"`
}

// Proxy is the cluster-wide HTTP(S) proxy configuration.
type Proxy struct {
	// HTTPProxy is the proxy URL for plain HTTP.
	// +optional
	HTTPProxy string `json:"httpProxy,omitempty"`
	// HTTPSProxy is the proxy URL for HTTPS.
	// +optional
	HTTPSProxy string `json:"httpsProxy,omitempty"`
	// NoProxy is a comma-separated list of hosts, domains and CIDRs that
	// bypass the proxy.
	// +optional
	NoProxy string `json:"noProxy,omitempty"`
}

// ManifestsConfigMapReference names a ConfigMap of extra manifests.
type ManifestsConfigMapReference struct {
	// Name of the ConfigMap.
	Name string `json:"name"`
}

// MirrorRegistryConfigMapReference points at a ConfigMap holding mirror
// registry configuration.
type MirrorRegistryConfigMapReference struct {
	// Name of the ConfigMap.
	Name string `json:"name"`
	// Namespace of the ConfigMap.
	Namespace string `json:"namespace"`
}

// LoadBalancerType says who runs the cluster's load balancer.
type LoadBalancerType string

const (
	// LoadBalancerTypeClusterManaged: the cluster runs it behind its VIPs.
	LoadBalancerTypeClusterManaged LoadBalancerType = "ClusterManaged"
	// LoadBalancerTypeUserManaged: the user runs it; no VIPs are given.
	LoadBalancerTypeUserManaged LoadBalancerType = "UserManaged"
)

// LoadBalancer configures the cluster's API and ingress load balancer.
type LoadBalancer struct {
	// Type of load balancer.
	// +kubebuilder:default:="ClusterManaged"
	// +kubebuilder:validation:Enum:="ClusterManaged";"UserManaged"
	// +optional
	Type LoadBalancerType `json:"type,omitempty"`
}

// ValidationResult is the outcome of one assisted-service validation.
type ValidationResult struct {
	// ID names the validation, e.g. "api-vips-defined".
	ID string `json:"id"`
	// Status is "success", "failure", "pending", "error" or "disabled".
	Status string `json:"status"`
	// Message explains the status to a human.
	Message string `json:"message"`
}

// ValidationResults is the list of validations of one category.
type ValidationResults []ValidationResult

// ValidationsStatus maps a validation category (e.g. "configuration",
// "hosts-data", "network", "operators") to its results.
type ValidationsStatus map[string]ValidationResults
