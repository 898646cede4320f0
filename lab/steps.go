package lab

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	bmov1alpha1 "github.com/metal3-io/baremetal-operator/apis/metal3.io/v1alpha1"
	configv1 "github.com/openshift/api/config/v1"
	machinev1beta1 "github.com/openshift/api/machine/v1beta1"

	"github.com/paritylab/paritylab/lab/agentbin"
	"github.com/paritylab/paritylab/lab/agentproviders"
	"github.com/paritylab/paritylab/lab/assisted"
	"github.com/paritylab/paritylab/lab/capi"
	"github.com/paritylab/paritylab/lab/capm3"
	"github.com/paritylab/paritylab/lab/controllers"
	"github.com/paritylab/paritylab/lab/crds"
	"github.com/paritylab/paritylab/lab/hub/local"
	"github.com/paritylab/paritylab/lab/hypershift"
	"github.com/paritylab/paritylab/lab/images"
	"github.com/paritylab/paritylab/lab/logs"
	"github.com/paritylab/paritylab/lab/metal3"
	"github.com/paritylab/paritylab/lab/ports"
	"github.com/paritylab/paritylab/lab/process"
	"github.com/paritylab/paritylab/lab/releases"
	"github.com/paritylab/paritylab/providers/controlplane"
	"github.com/paritylab/paritylab/providers/controlplane/release"
	agentv1beta1 "github.com/paritylab/paritylab/providers/thirdparty/agentinstall/v1beta1"
)

func (l *Lab) startHub(ctx context.Context) error {
	l.hub = local.New(local.Options{
		Dir:     filepath.Join(l.opts.StateDir, "hub"),
		LogDir:  l.opts.LogDir,
		Tracker: l.ledger,
		Logger:  l.opts.Logger.WithName("hub"),
	})
	if err := l.hub.Create(ctx); err != nil {
		return err
	}
	kubeconfig, err := l.hub.Kubeconfig()
	if err != nil {
		return err
	}
	if err := os.WriteFile(l.KubeconfigPath(), kubeconfig, 0o600); err != nil {
		return fmt.Errorf("write hub kubeconfig: %w", err)
	}
	return errors.Join(
		l.ledger.SetValue(valueKubeconfig, l.KubeconfigPath()),
		l.ledger.SetValue(valueServer, l.hub.RESTConfig().Host),
	)
}

func (l *Lab) stopHub(ctx context.Context) error {
	if l.hub == nil {
		return nil
	}
	return l.hub.Dispose(ctx)
}

func (l *Lab) startControllers(ctx context.Context) error {
	logger, f, err := logs.File(filepath.Join(l.opts.LogDir, "hub-controllers.log"), 2)
	if err != nil {
		return err
	}
	logs.SetGlobal(logger)
	components, err := l.hubComponents(ctx)
	if err != nil {
		f.Close()
		return err
	}
	host, err := controllers.Start(ctx, controllers.Options{
		RESTConfig:  l.hub.RESTConfig(),
		WebhookHost: l.hub.WebhookHost(),
		CertDir:     filepath.Join(l.opts.StateDir, "webhook-certs"),
		Components:  components,
		Logger:      logger,
	})
	if err != nil {
		f.Close()
		return err
	}
	l.controllers = host
	l.closeOnStop = append(l.closeOnStop, f)
	records := hubComponentRecords(l.hub.Backend(), l.opts.MachineController)
	if l.opts.HostedClusters {
		records = append(records, hostedClusterRecords()...)
	}
	if err := writeComponents(l.opts.StateDir, records); err != nil {
		return err
	}
	mgr := host.Manager()
	l.client, err = client.New(mgr.GetConfig(), client.Options{Scheme: mgr.GetScheme(), Mapper: mgr.GetRESTMapper()})
	if err != nil {
		return fmt.Errorf("create hub client: %w", err)
	}
	return nil
}

// startCAPM3 runs upstream CAPM3's manager on the hub. It starts after
// the controllers: the manager watches BareMetalHosts and CAPI core's
// objects, whose CRDs must be served before it starts.
func (l *Lab) startCAPM3(ctx context.Context) error {
	kubeconfig, err := l.hub.Kubeconfig()
	if err != nil {
		return err
	}
	l.capm3, err = capm3.Start(ctx, capm3.Options{
		RESTConfig: l.hub.RESTConfig(),
		Kubeconfig: kubeconfig,
		Dir:        filepath.Join(l.opts.StateDir, capm3.ComponentName),
		LogDir:     l.opts.LogDir,
		Tracker:    l.ledger,
		Logger:     l.opts.Logger.WithName(capm3.ComponentName),
	})
	return err
}

func (l *Lab) stopCAPM3(context.Context) error {
	if l.capm3 == nil {
		return nil
	}
	err := l.capm3.Stop()
	l.capm3 = nil
	return err
}

func (l *Lab) stopControllers(ctx context.Context) error {
	var errs []error
	if l.controllers != nil {
		errs = append(errs, l.controllers.Stop(ctx))
	}
	if l.hypershift != nil {
		errs = append(errs, l.hypershift.Stop())
	}
	if l.spokes != nil {
		errs = append(errs, l.spokes.stopAll(ctx))
	}
	for _, c := range l.closeOnStop {
		errs = append(errs, c.Close())
	}
	l.closeOnStop = nil
	return errors.Join(errs...)
}

// hubComponents are what runs in process on a local hub: Cluster API core,
// the lab's assisted service (with workload clusters as its spokes), its
// bare-metal operator, our agent providers, and the CRDs of APIs whose
// controllers run elsewhere (the machine API runs in workload clusters;
// CAPM3 runs as a process of its own, startCAPM3, and installs its CRDs
// itself: here only its types join the lab's scheme).
func (l *Lab) hubComponents(ctx context.Context) ([]controllers.Component, error) {
	store, err := images.Open(images.StoreOptions{})
	if err != nil {
		return nil, err
	}
	cache, err := images.CacheDir()
	if err != nil {
		return nil, err
	}
	agent, err := agentbin.Path(ctx, cache)
	if err != nil {
		return nil, err
	}
	deployer := &lazyDeployer{l: l}
	l.spokes = newSpokes(l.opts.StateDir, l.opts.LogDir, l.ledger, machineAPIDeps{
		images: store, agent: agent, deployer: deployer, logger: l.opts.Logger.WithName("machine-api"),
		machineController: l.opts.MachineController, tracker: l.ledger,
	}, l.releases)
	// The converged flow, assisted-service's default: the bare-metal
	// operator builds PreprovisioningImages, InfraEnv hosts' images come
	// from assisted-service and run its deploy step, other hosts' from
	// the image-customization controller. Agents hold the deprovision
	// finalizer, as upstream's do.
	svc, err := assisted.New(assisted.Options{Images: store, Agent: agent, Spokes: l.spokes, ConvergedFlow: true, AgentDeprovision: true,
		NoRouteTo: []string{ports.Unrouted}, Logger: l.opts.Logger.WithName("assisted")})
	if err != nil {
		return nil, err
	}
	l.assisted = svc
	bmo, err := metal3.New(metal3.Options{
		Deployer: deployer, Images: store, Logger: l.opts.Logger.WithName("metal3"),
		PreprovisioningImages: true, CustomDeployer: assistedDeployStep{svc},
		// Lab guests do not act on the ACPI power button.
		SoftPowerOffTimeout: 5 * time.Second,
	})
	if err != nil {
		return nil, err
	}
	components := []controllers.Component{
		capi.New(capi.Options{}),
		svc,
		bmo,
		&metal3.ImageCustomization{ISOURL: bmo.DeployRamdiskURL(), Leave: assistedImage},
		&controllers.CRDsOnly{
			ComponentName: "infrastructure-apis",
			Sets:          []crds.Set{crds.MachineAPI()},
			Schemes:       []func(*runtime.Scheme) error{machinev1beta1.Install, capm3.AddToScheme},
		},
	}
	providers := agentproviders.Options{ControlPlane: controlplane.Options{Releases: &release.Remote{Dial: hubDial}}}
	components = append(components, agentproviders.New(providers)...)
	if !l.opts.HostedClusters {
		return components, nil
	}
	op, err := hypershift.New(hypershift.Options{StateDir: l.opts.StateDir, LogDir: l.opts.LogDir, Tracker: l.ledger,
		Releases: hostedReleases(l.releases), Logger: l.opts.Logger.WithName("hypershift")})
	if err != nil {
		return nil, err
	}
	l.hypershift = op
	return append(components, op), nil
}

// hostedReleases are the registry's releases as a HostedCluster names
// them: by digest or by tag.
func hostedReleases(pushed []releases.Pushed) []configv1.Release {
	var out []configv1.Release
	for _, p := range pushed {
		out = append(out, configv1.Release{Version: p.Version, Image: p.Image}, configv1.Release{Version: p.Version, Image: p.Tag})
	}
	return out
}

// assistedDeployStep runs the deploy steps of assisted-service's images
// (the ironic agent's start_assisted_install) for the hub's bare-metal
// operator.
type assistedDeployStep struct{ svc *assisted.Service }

func (d assistedDeployStep) DeployStepDone(ctx context.Context, host metal3.Host, method string) (bool, error) {
	return d.svc.DeployStepDone(ctx, host.Namespace, host.Name, method)
}

// assistedImage: assisted-service answers the images of hosts labelled
// with an InfraEnv; OpenShift's image-customization controller leaves
// them to it.
func assistedImage(ppi *bmov1alpha1.PreprovisioningImage) bool {
	_, ok := ppi.Labels[agentv1beta1.InfraEnvNameLabel]
	return ok
}

func encodeIdentity(id process.Identity) string {
	raw, _ := json.Marshal(id)
	return string(raw)
}

func decodeIdentity(s string) (process.Identity, error) {
	var id process.Identity
	if err := json.Unmarshal([]byte(s), &id); err != nil {
		return id, fmt.Errorf("decode owner identity: %w", err)
	}
	return id, nil
}
