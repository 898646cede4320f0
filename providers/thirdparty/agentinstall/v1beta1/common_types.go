package v1beta1

// ClusterReference names a hive ClusterDeployment, possibly in another
// namespace.
type ClusterReference struct {
	// Name of the ClusterDeployment.
	// +optional
	Name string `json:"name,omitempty"`
	// Namespace of the ClusterDeployment.
	// +optional
	Namespace string `json:"namespace,omitempty"`
}

// Proxy is the HTTP(S) proxy configuration handed to discovered hosts and
// the clusters installed from them.
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

// MirrorRegistryConfigMapReference points at a ConfigMap holding mirror
// registry configuration (registries.conf and a CA bundle).
type MirrorRegistryConfigMapReference struct {
	// Name of the ConfigMap.
	Name string `json:"name"`
	// Namespace of the ConfigMap.
	Namespace string `json:"namespace"`
}

// ValidationResult is the outcome of one assisted-service validation.
type ValidationResult struct {
	// ID names the validation, e.g. "has-min-cpu-cores".
	ID string `json:"id"`
	// Status is "success", "failure", "pending", "error" or "disabled".
	Status string `json:"status"`
	// Message explains the status to a human.
	Message string `json:"message"`
}

// ValidationResults is the list of validations of one category.
type ValidationResults []ValidationResult

// ValidationsStatus maps a validation category (e.g. "hardware",
// "network", "operators") to its results.
type ValidationsStatus map[string]ValidationResults
