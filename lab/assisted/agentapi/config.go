package agentapi

import "encoding/json"

// Files in the guest images.
const (
	// ImageKindFile says which image booted: "discovery" or "node".
	ImageKindFile = "/etc/paritylab/image"
	// DiscoveryConfigFile is baked into an InfraEnv's discovery image.
	DiscoveryConfigFile = "/etc/paritylab/agent.json"
)

// Image kinds.
const (
	ImageDiscovery = "discovery"
	ImageNode      = "node"
)

// DiscoveryConfig tells an agent where to register and as what.
type DiscoveryConfig struct {
	InfraEnvID string `json:"infraEnvID"`
	Token      string `json:"token"`
	// ServicePort is the service's port on the host; the guest reaches the
	// host at its default gateway (QEMU user-mode networking).
	ServicePort int `json:"servicePort"`
	// ServiceHost overrides the gateway (tests, other networks).
	ServiceHost string `json:"serviceHost,omitempty"`
	// IronicAgent says the image also carries the ironic agent
	// (assisted-service's converged flow adds it for a
	// PreprovisioningImage): the host was booted by a deploy step, which
	// reboots it once the install wrote the disk, so the agent stops
	// there instead of rebooting, as the installer does when it finds
	// ironic-agent.service.
	IronicAgent bool `json:"ironicAgent,omitempty"`
	// RegistriesConf and RegistryCA are the mirror registry
	// configuration the discovery ignition writes to
	// RegistriesConfPath and RegistryCAPath: the InfraEnv's
	// mirrorRegistryRef, else the hub's.
	RegistriesConf string `json:"registriesConf,omitempty"`
	RegistryCA     string `json:"registryCA,omitempty"`
}

// Where a discovery host's mirror registry configuration goes, as
// assisted-service's discovery ignition writes it.
const (
	RegistriesConfPath = "/etc/containers/registries.conf"
	RegistryCAPath     = "/etc/pki/ca-trust/source/anchors/domain.crt"
)

// InstallArgs are the arguments of a StepInstall.
type InstallArgs struct {
	Role      string `json:"role"`
	Bootstrap bool   `json:"bootstrap,omitempty"`
	// InstallationDisk is the device to write, e.g. /dev/vda.
	InstallationDisk string `json:"installation_disk"`
	// ImagePath is the node image on the service (GET, same token).
	ImagePath   string `json:"image_path"`
	ImageSHA256 string `json:"image_sha256"`
	// Pulls are the images the host pulls before it writes the disk,
	// through its registries.conf, as the installer pulls the release
	// image and its own image from it: by digest, named as the release
	// names them. Empty when the service could not read the release.
	Pulls []string `json:"pulls,omitempty"`
	// Node is written next to the image for the installed node to read.
	Node NodeConfig `json:"node"`
}

// NodeConfig is what an installed node needs to join its cluster, the
// lab's stand-in for the ignition an OpenShift node boots with.
type NodeConfig struct {
	// Name of the Node (the host name). Empty in shared worker user data:
	// the node is named after its host name, which a config drive's
	// metadata (local-hostname) sets as cloud-init and afterburn do.
	Name string `json:"name,omitempty"`
	// ProviderID, when set, goes on the Node; Labels are the labels the
	// node registers with. Either's value may name a config drive metadata
	// variable ($METADATA_UUID, see providers/bootstrap/metadataref), which
	// the node resolves at boot.
	ProviderID string            `json:"providerID,omitempty"`
	Labels     map[string]string `json:"labels,omitempty"`
	Taints     []Taint           `json:"taints,omitempty"`
	// APIPort is the workload cluster's API server port on the host,
	// reached at APIHost or else the guest's default gateway.
	APIPort int    `json:"apiPort"`
	APIHost string `json:"apiHost,omitempty"`
	// TLSServerName is the name the API server certificate is checked
	// for (the guest connects by gateway address).
	TLSServerName string `json:"tlsServerName"`
	// CACert, ClientCert and ClientKey (PEM) authenticate the node as
	// system:node:<Name>.
	CACert     string `json:"caCert"`
	ClientCert string `json:"clientCert"`
	ClientKey  string `json:"clientKey"`
	// Bootstrap says ClientCert and ClientKey are not the node's own
	// identity but the shared bootstrap credential of workers (group
	// system:bootstrappers): the node creates a CertificateSigningRequest
	// for system:node:<Name> with it and joins once the request is
	// approved and signed, as a kubelet's TLS bootstrap does.
	Bootstrap bool `json:"bootstrap,omitempty"`
	// BootstrappedFrom, on an identity a node keeps after bootstrapping,
	// is the SHA-256 of the bootstrap config it came from: a disk keeps
	// the identity only for the user data it was provisioned with.
	BootstrappedFrom string `json:"bootstrappedFrom,omitempty"`
	// ReadyBeforeProviderID lets a bootstrapped node turn Ready before
	// anything writes its providerID, as every kubelet may. Machine API
	// workers wait for it (MAO's nodelink links a Machine on a change of
	// readiness); a hosted cluster's node must not: the agent provider
	// writes its providerID once its install is done, which waits for the
	// node to be Ready.
	ReadyBeforeProviderID bool `json:"readyBeforeProviderID,omitempty"`
	// KubeletVersion is reported in the Node's status until the Node's
	// DesiredKubeletAnnotation names another.
	KubeletVersion string `json:"kubeletVersion,omitempty"`
	// Report, when set, is where the node reports its last install stages.
	Report *ReportTarget `json:"report,omitempty"`
	// PointerIgnition, when set, is the Ignition config assisted-service
	// writes for a day-2 host of a cluster with an ignition endpoint (a
	// HyperShift hosted cluster): it carries no credentials, only where
	// the node's real config is (a config.merge source), the headers to
	// fetch it with (the bearer token) and the CA to trust. The node
	// fetches it at first boot, as Ignition does, and joins with the
	// NodeConfig it carries at UserDataFile; Name and Report are kept.
	PointerIgnition json.RawMessage `json:"pointerIgnition,omitempty"`
}

// DesiredKubeletAnnotation on a Node names the kubelet version the node
// reports from then on: the lab cluster-version operator's stand-in for a
// machine config moving the node to another release in place. It is
// lab/workload/cvo's DesiredKubeletAnnotation, named here too so that the
// node agent does not import the operator.
const DesiredKubeletAnnotation = "paritylab.io/desired-kubelet-version"

// Taint is a Node taint.
type Taint struct {
	Key    string `json:"key"`
	Value  string `json:"value,omitempty"`
	Effect string `json:"effect"`
}

// ReportTarget is the assisted service host record to report to.
type ReportTarget struct {
	InfraEnvID  string `json:"infraEnvID"`
	HostID      string `json:"hostID"`
	Token       string `json:"token"`
	ServicePort int    `json:"servicePort"`
	ServiceHost string `json:"serviceHost,omitempty"`
}

// ConfigDriveHostnameKey is the config drive metadata key (meta_data.json)
// naming the host, which the node agent takes as its host name.
const ConfigDriveHostnameKey = "local-hostname"

// KubeletClientSigner is the signer of kubelet client certificates.
const KubeletClientSigner = "kubernetes.io/kube-apiserver-client-kubelet"

// UserData is what a provisioner hands a host on a config drive: a
// discovery config (CAPI: the bootstrap provider's data) or a node config
// (MAPI: the cluster's worker user data).
type UserData struct {
	Discovery *DiscoveryConfig `json:"discovery,omitempty"`
	Node      *NodeConfig      `json:"node,omitempty"`
}

// UserDataFile is where an Ignition config hands the agent its UserData:
// a provisioner's user data may be Ignition (what a bootstrap provider
// produces) or a UserData document.
const UserDataFile = "/etc/paritylab/userdata.json"
