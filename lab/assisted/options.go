package assisted

import (
	"context"
	"errors"
	"time"

	"github.com/go-logr/logr"
	bmov1alpha1 "github.com/metal3-io/baremetal-operator/apis/metal3.io/v1alpha1"
	configv1 "github.com/openshift/api/config/v1"

	"github.com/paritylab/paritylab/lab/images"
)

// Options configure the service. Images, Agent and Spokes are required.
type Options struct {
	// Images builds the discovery and node images.
	Images *images.Store
	// Agent is the lab-agent binary baked into images (lab/agentbin).
	Agent string
	// Spokes creates the workload clusters installs produce.
	Spokes Spokes
	// Requirements are the per-role hardware minimums; default the ones
	// assisted-service documents (DefaultRequirements).
	Requirements *Requirements
	// ConvergedFlow is assisted-service's ALLOW_CONVERGED_FLOW on a hub
	// whose bare-metal operator builds PreprovisioningImages: hosts of
	// an InfraEnv boot its image as their deploy ramdisk and are
	// provisioned with spec.customDeploy (start_assisted_install).
	// Upstream's default; off here unless set, because it needs a
	// bare-metal operator with PreprovisioningImages and a custom
	// deployer (metal3.Options), which the hub wires together. Off is
	// the non-converged flow: live ISOs set by the BMAC.
	ConvergedFlow bool
	// AgentDeprovision has every Agent hold upstream's finalizer
	// agent.agent-install.openshift.io/ai-deprovision, so that a deleted
	// Agent's host leaves its cluster (its Node, through its Machine)
	// before it is deregistered (agent_deprovision.go). Upstream always
	// does this, and the lab's hub sets it; off, for tests that do not
	// need it, a deleted Agent's host is deregistered at once.
	AgentDeprovision bool
	// ImageCooldown is how long after an InfraEnv's image was created
	// its hosts wait before booting it. Default 60s, upstream's
	// InfraEnvImageCooldownPeriod.
	ImageCooldown time.Duration
	// HeartbeatTimeout is how long without contact disconnects a host.
	// Default 3m, as upstream.
	HeartbeatTimeout time.Duration
	// Namespace is the infrastructure operator's, where the
	// AgentServiceConfig's mirror registry ConfigMap is. Default
	// multicluster-engine.
	Namespace string
	// NoRouteTo are loopback addresses the hub cannot reach (a
	// disconnected hub's view of the public registry). The service never
	// reaches off loopback either way.
	NoRouteTo []string
	// Logger. Default discard.
	Logger logr.Logger
}

func (o *Options) defaults() error {
	switch {
	case o.Images == nil:
		return errors.New("assisted: Images is required")
	case o.Agent == "":
		return errors.New("assisted: Agent is required")
	case o.Spokes == nil:
		return errors.New("assisted: Spokes is required")
	}
	if o.Requirements == nil {
		r := DefaultRequirements()
		o.Requirements = &r
	}
	if o.Namespace == "" {
		o.Namespace = "multicluster-engine"
	}
	if o.ImageCooldown == 0 {
		o.ImageCooldown = 60 * time.Second
	}
	if o.HeartbeatTimeout == 0 {
		o.HeartbeatTimeout = 3 * time.Minute
	}
	if o.Logger.GetSink() == nil {
		o.Logger = logr.Discard()
	}
	return nil
}

// Spokes creates and removes workload clusters.
type Spokes interface {
	// Create starts the workload cluster of a ClusterDeployment at an
	// OpenShift release (its version, and its image as the
	// ClusterImageSet names it, when known); creating one that exists
	// returns it.
	Create(ctx context.Context, key ClusterKey, release configv1.Release) (Spoke, error)
	// Get returns a running workload cluster, or nil.
	Get(key ClusterKey) Spoke
	// Delete stops and removes one.
	Delete(ctx context.Context, key ClusterKey) error
}

// ClusterKey names a ClusterDeployment.
type ClusterKey struct{ Namespace, Name string }

func (k ClusterKey) String() string { return k.Namespace + "/" + k.Name }

// Spoke is a workload cluster nodes join.
type Spoke interface {
	// APIPort is the API server's port on host loopback.
	APIPort() int
	// TLSServerName is a name on the API server's certificate.
	TLSServerName() string
	// CACertPEM is the API server's CA.
	CACertPEM() []byte
	// NodeCredentials issues a client certificate for system:node:<name>.
	NodeCredentials(node string) (certPEM, keyPEM []byte, err error)
	// AdminKubeconfig reaches the API server at https://127.0.0.1:<port>.
	AdminKubeconfig() []byte
	// KubernetesVersion is what the kubelet of a node joining it now
	// reports: the Kubernetes of the release the cluster is at.
	KubernetesVersion() string
	// InfrastructureName is the cluster's infrastructure ID: the
	// installer's prefix of machine API object names.
	InfrastructureName() string
	// StartMachineAPI runs the cluster's machine API once the install is
	// done, first writing what the installer leaves for it, including a
	// BareMetalHost and a Machine per installed host given. Starting it
	// again does nothing.
	StartMachineAPI(ctx context.Context, installed []InstalledHost) error
	// AddInstalledHost records a day-2 host in the running machine API:
	// its BareMetalHost and the Machine that consumes it.
	AddInstalledHost(ctx context.Context, host Day2Host) error
}

// Day2Host is a host the BMAC adds to an installed cluster's machine API.
type Day2Host struct {
	InstalledHost
	// Machine names its Machine: <clusterdeployment>-<baremetalhost>.
	Machine string
	// ClusterName is the Machine's cluster label: the BMAC labels it
	// with the ClusterDeployment's name, where the installer's Machines
	// carry the infrastructure name.
	ClusterName string
	// HubSpec is the hub BareMetalHost's spec, which the spoke's copies
	// without the BMC.
	HubSpec bmov1alpha1.BareMetalHostSpec
}
