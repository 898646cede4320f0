package metal3

import (
	"runtime"
	"time"

	"github.com/go-logr/logr"

	"github.com/paritylab/paritylab/lab/images"
)

// Options configure an Operator. The zero value works: hosts register,
// power and boot live ISOs; disk images and metadata cleaning need a
// Deployer.
type Options struct {
	// Deployer writes disk images to hosts and wipes their disks. Default
	// none: provisioning a disk image, and deprovisioning with
	// automatedCleaningMode metadata, fail with a message saying so.
	Deployer Deployer
	// PreprovisioningImages is BMO's --build-preprov-image: hosts get a
	// PreprovisioningImage, which another controller (assisted-service's,
	// or an image-customization controller) makes ready with the deploy
	// ramdisk to boot; inspecting and preparing hosts wait for it. Default
	// off: hosts need none, and custom deploys cannot run.
	PreprovisioningImages bool
	// CustomDeployer runs the deploy steps spec.customDeploy names, in
	// the deploy ramdisk the host boots from its PreprovisioningImage.
	// Default none: a custom deploy fails with a message saying so.
	CustomDeployer CustomDeployer
	// InBandPowerOffTimeout is how long a host whose deploy steps
	// returned may take to power itself off (the agent's in-band power
	// off) before it is forced off through the BMC. Default 30s, Ironic's
	// post_deploy_get_power_state_retries (6) times their interval (5s).
	InBandPowerOffTimeout time.Duration
	// DeployPollInterval is how often a host running a custom deploy step
	// is checked. Default 10s, BMO's requeue while Ironic deploys.
	DeployPollInterval time.Duration
	// Images builds config drives. Default: images.Open with the default
	// cache, on first use.
	Images *images.Store
	// Concurrency is the number of hosts reconciled at once. Default
	// min(NumCPU, 8), as BMO.
	Concurrency int
	// PollInterval is how often a host in a steady state (available,
	// provisioned, externally provisioned) is checked against its BMC, so
	// out-of-band power changes show in status.poweredOn. Default 60s, as
	// BMO.
	PollInterval time.Duration
	// PowerTimeout bounds a power change, from the Reset request until
	// the BMC reports the new state. Default 60s, Ironic's
	// power_state_change_timeout.
	PowerTimeout time.Duration
	// SoftPowerOffTimeout is how long a soft power off (GracefulShutdown)
	// may take before the power is forced off. Default 30s (Ironic waits
	// 600s; the lab's guests need no more than this).
	SoftPowerOffTimeout time.Duration
	// RequestTimeout bounds one Redfish request, including InsertMedia,
	// during which the BMC downloads the image. Default 2m.
	RequestTimeout time.Duration
	// ErrorBackoff is the retry delay after a host's first error; it
	// doubles with every further error (status.errorCount), with jitter,
	// up to MaxErrorBackoff. Defaults 1s and 15m, as BMO's 2^n seconds.
	ErrorBackoff    time.Duration
	MaxErrorBackoff time.Duration
	// ControllerName names the controller in logs and events' source.
	// Default "metal3-baremetalhost".
	ControllerName string
	// Logger receives what the config drive server does. Reconciles log
	// with the logger of their context. Default discard.
	Logger logr.Logger
}

func (o *Options) defaults() {
	if o.Concurrency <= 0 {
		o.Concurrency = min(runtime.NumCPU(), 8)
	}
	setDefault(&o.PollInterval, 60*time.Second)
	setDefault(&o.PowerTimeout, 60*time.Second)
	setDefault(&o.DeployPollInterval, 10*time.Second)
	setDefault(&o.InBandPowerOffTimeout, 30*time.Second)
	setDefault(&o.SoftPowerOffTimeout, 30*time.Second)
	setDefault(&o.RequestTimeout, 2*time.Minute)
	setDefault(&o.ErrorBackoff, time.Second)
	setDefault(&o.MaxErrorBackoff, 15*time.Minute)
	if o.ControllerName == "" {
		o.ControllerName = "metal3-baremetalhost"
	}
	if o.Logger.GetSink() == nil {
		o.Logger = logr.Discard()
	}
}

func setDefault(d *time.Duration, v time.Duration) {
	if *d <= 0 {
		*d = v
	}
}
