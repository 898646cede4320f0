package mapi

import (
	"errors"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/client-go/rest"

	"github.com/paritylab/paritylab/lab/assisted"
	"github.com/paritylab/paritylab/lab/assisted/agentapi"
	"github.com/paritylab/paritylab/lab/images"
	"github.com/paritylab/paritylab/lab/metal3"
)

// Options configure the machine API of one workload cluster.
type Options struct {
	// RESTConfig is admin access to the workload cluster. Required.
	RESTConfig *rest.Config
	// Deployer writes disk images to hosts (shared with the hub's
	// bare-metal operator: the same hosts move between them). Required
	// to provision Machines.
	Deployer metal3.Deployer
	// Images builds the node image and config drives. Required unless
	// NodeImage is set.
	Images *images.Store
	// Agent is the lab-agent binary baked into the node image.
	Agent string
	// NodeImage, when set, is the node image file to serve instead of
	// building one from Images and Agent (tests).
	NodeImage string
	// WorkerNodeConfig is the node config of the shared worker user data:
	// API endpoint, CA and the bootstrap credential (Bootstrap true, no
	// Name). Required.
	WorkerNodeConfig agentapi.NodeConfig
	// InfrastructureName names the worker MachineSet, as the installer
	// does (<infra>-worker-0). Required.
	InfrastructureName string
	// Installed are the hosts the cluster's install put in it; Start
	// writes their BareMetalHosts and Machines as the installer does on
	// the BareMetal platform, and sizes the worker MachineSet to their
	// workers. Empty for clusters whose hosts the machine API does not
	// know (CAPI-provider installs).
	Installed []assisted.InstalledHost
	// Namespace of Machines and hosts. Default openshift-machine-api.
	Namespace string
	// Retry is how soon the actuator tries again while it waits (for a
	// free host, deprovisioning, remediation steps). Default 10s.
	Retry time.Duration
	// Metal3 configures the cluster's bare-metal operator; its Deployer
	// and Images default to the fields above.
	Metal3 metal3.Options
	// MachineController, when set, is the upstream bare-metal machine
	// controller binary to run instead of the in-process port of its
	// actuator and Metal3Remediation controller.
	MachineController *ExternalController
	// WebhookCertDir receives the serving certificate and key (0600) of
	// the machine API's webhook server. Default: a temporary directory,
	// removed by Stop.
	WebhookCertDir string
	// Logger receives the controllers' logs. Default discard.
	Logger logr.Logger
}

func (o *Options) defaults() error {
	if o.RESTConfig == nil {
		return errors.New("machine API options: RESTConfig is required")
	}
	if o.InfrastructureName == "" {
		return errors.New("machine API options: InfrastructureName is required")
	}
	if o.NodeImage == "" && (o.Images == nil || o.Agent == "") {
		return errors.New("machine API options: NodeImage, or Images and Agent, are required")
	}
	if o.Namespace == "" {
		o.Namespace = "openshift-machine-api"
	}
	if e := o.MachineController; e != nil {
		if err := e.validate(); err != nil {
			return err
		}
		e.defaults()
	}
	if o.Retry <= 0 {
		o.Retry = 10 * time.Second
	}
	if o.Metal3.Deployer == nil {
		o.Metal3.Deployer = o.Deployer
	}
	if o.Metal3.Images == nil {
		o.Metal3.Images = o.Images
	}
	if o.Logger.GetSink() == nil {
		o.Logger = logr.Discard()
	}
	if o.Metal3.Logger.GetSink() == nil {
		o.Metal3.Logger = o.Logger.WithName("metal3")
	}
	return nil
}
