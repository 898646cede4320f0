package mapi

import (
	"context"
	"errors"
	"fmt"
	"sync"

	bmov1alpha1 "github.com/metal3-io/baremetal-operator/apis/metal3.io/v1alpha1"
	capm3v1beta1 "github.com/metal3-io/cluster-api-provider-metal3/api/v1beta1"
	openshiftfeatures "github.com/openshift/api/features"
	machinev1beta1 "github.com/openshift/api/machine/v1beta1"
	maomachine "github.com/openshift/machine-api-operator/pkg/controller/machine"
	maomhc "github.com/openshift/machine-api-operator/pkg/controller/machinehealthcheck"
	maomachineset "github.com/openshift/machine-api-operator/pkg/controller/machineset"
	maonodelink "github.com/openshift/machine-api-operator/pkg/controller/nodelink"
	certificatesv1 "k8s.io/api/certificates/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/component-base/featuregate"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/paritylab/paritylab/lab/metal3"
	"github.com/paritylab/paritylab/lab/process"
)

// MachineAPI is the machine API running against one workload cluster.
type MachineAPI struct {
	opts   Options
	images *imageServer
	client client.Client
	cancel context.CancelFunc
	done   chan struct{}
	runErr error
	// external is the upstream machine controller, when it runs.
	external *process.Process
	// hooks serves the machine API's webhooks.
	hooks *webhookServing

	stopOnce sync.Once
	stopErr  error
}

// Start writes the installer's machine API objects into the cluster and
// runs, in one manager, MAO's Machine (with our actuator), MachineSet,
// MachineHealthCheck and nodelink controllers, the port of the bare-metal
// machine controller's Metal3Remediation controller, the bare-metal
// operator for the cluster's hosts and the node CSR approver; with
// Options.MachineController, the upstream binary replaces the Machine and
// Metal3Remediation controllers. They run until Stop.
func Start(ctx context.Context, opts Options) (_ *MachineAPI, retErr error) {
	if err := opts.defaults(); err != nil {
		return nil, err
	}
	img, err := newImageServer(opts)
	if err != nil {
		return nil, err
	}
	hooks, err := newWebhookServing(opts.WebhookCertDir)
	if err != nil {
		return nil, errors.Join(err, img.close())
	}
	mgr, bmo, err := newManager(opts, img, hooks)
	if err != nil {
		return nil, errors.Join(err, img.close(), hooks.close())
	}
	c, err := client.New(opts.RESTConfig, client.Options{Scheme: mgr.GetScheme()})
	if err != nil {
		return nil, errors.Join(fmt.Errorf("machine API client: %w", err), img.close(), bmo.Close(), hooks.close())
	}
	if err := install(ctx, c, opts, img); err != nil {
		return nil, errors.Join(err, img.close(), bmo.Close(), hooks.close())
	}
	runCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	m := &MachineAPI{opts: opts, images: img, client: c, cancel: cancel, done: make(chan struct{}), hooks: hooks}
	go func() {
		defer close(m.done)
		if err := mgr.Start(runCtx); err != nil {
			m.runErr = fmt.Errorf("machine API manager: %w", err)
			opts.Logger.Error(err, "Machine API manager stopped")
		}
	}()
	if !mgr.GetCache().WaitForCacheSync(ctx) {
		return nil, errors.Join(errors.New("machine API: caches did not sync"), m.Stop())
	}
	if err := hooks.install(ctx, mgr, c); err != nil {
		return nil, errors.Join(err, m.Stop())
	}
	if e := opts.MachineController; e != nil {
		if m.external, err = startExternal(ctx, e, opts.Namespace, opts.Logger); err != nil {
			return nil, errors.Join(err, m.Stop())
		}
	}
	opts.Logger.V(1).Info("Machine API running", "machineSet", WorkerMachineSetName(opts.InfrastructureName), "nodeImage", img.url())
	return m, nil
}

// Scheme holds the types the machine API reads and writes.
func Scheme() (*runtime.Scheme, error) {
	s := runtime.NewScheme()
	err := errors.Join(clientgoscheme.AddToScheme(s), machinev1beta1.Install(s), bmov1alpha1.AddToScheme(s), certificatesv1.AddToScheme(s),
		capm3v1beta1.AddToScheme(s))
	if err != nil {
		return nil, fmt.Errorf("machine API scheme: %w", err)
	}
	return s, nil
}

func newManager(opts Options, img *imageServer, hooks *webhookServing) (manager.Manager, *metal3.Operator, error) {
	s, err := Scheme()
	if err != nil {
		return nil, nil, err
	}
	mopts := manager.Options{
		Scheme: s, Logger: opts.Logger,
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		WebhookServer:          hooks.server(),
		// Every workload cluster runs the same controllers in this
		// process, next to the hub's bare-metal operator.
		Controller: config.Controller{SkipNameValidation: ptr.To(true)},
	}
	mgr, err := ctrl.NewManager(opts.RESTConfig, mopts)
	if err != nil {
		return nil, nil, fmt.Errorf("machine API manager: %w", err)
	}
	bmo, err := metal3.New(opts.Metal3)
	if err != nil {
		return nil, nil, err
	}
	if err := addControllers(mgr, mopts, opts, img, bmo); err != nil {
		return nil, nil, errors.Join(err, bmo.Close())
	}
	return mgr, bmo, nil
}

func addControllers(mgr manager.Manager, mopts manager.Options, opts Options, img *imageServer, bmo *metal3.Operator) error {
	gate, err := featureGate()
	if err != nil {
		return err
	}
	machineClient, err := machineControllerClient(mgr)
	if err != nil {
		return err
	}
	actuator := NewActuator(machineClient, mgr.GetEventRecorderFor("baremetal-actuator"), opts.Logger.WithName("actuator"), opts.Retry)
	certs, err := kubernetes.NewForConfig(opts.RESTConfig)
	if err != nil {
		return fmt.Errorf("machine approver client: %w", err)
	}
	appr := &approver{client: mgr.GetClient(), certs: certs, namespace: opts.Namespace, recheck: opts.Retry, log: opts.Logger.WithName("machine-approver")}
	var machineControllers error
	if opts.MachineController == nil {
		machineControllers = errors.Join(
			wrap("machine controller", maomachine.AddWithActuator(hostAndNodeWatches{Manager: mgr, client: machineClient}, actuator, gate)),
			wrap("metal3remediation controller", (&metal3RemediationReconciler{client: machineClient, log: opts.Logger.WithName("metal3remediation")}).setupWithManager(mgr)),
		)
	}
	return errors.Join(
		machineControllers,
		wrap("machineset controller", maomachineset.Add(mgr, mopts, gate)),
		wrap("machinehealthcheck controller", maomhc.Add(mgr, mopts)),
		wrap("nodelink controller", maonodelink.Add(mgr, mopts)),
		wrap("machine approver", appr.setupWithManager(mgr)),
		wrap("bare-metal operator", bmo.SetupWithManager(context.Background(), mgr)),
		wrap("node image server", mgr.Add(img)),
		wrap("installer controller", mgr.Add(newInstallerController(mgr.GetAPIReader(), mgr.GetClient(), opts))),
		wrap("Metal3Remediation webhooks", addRemediationWebhooks(mgr)),
	)
}

// MachineControllerAgent is the program name of upstream's bare-metal
// machine controller (cmd/manager of cluster-api-provider-baremetal,
// shipped as machine-controller-manager in OpenShift's images), which runs
// MAO's Machine controller with the bare-metal actuator and the
// Metal3Remediation controller; it starts its requests' user agent. The
// lab's port of those writes under it, and the upstream binary runs under
// it, so that a workload cluster's audit log tells their writes from MAO's
// other controllers' (separate binaries upstream) as it does in OpenShift.
const MachineControllerAgent = "machine-controller-manager"

// machineControllerClient is the client of the machine controller's
// binary: its own user agent, reads from the manager's cache as
// upstream's manager client does.
func machineControllerClient(mgr manager.Manager) (client.Client, error) {
	cfg := rest.CopyConfig(mgr.GetConfig())
	cfg.UserAgent = MachineControllerAgent + "/v0.0.0 (paritylab lab/mapi port)"
	c, err := client.New(cfg, client.Options{Scheme: mgr.GetScheme(), Mapper: mgr.GetRESTMapper(),
		Cache: &client.CacheOptions{Reader: mgr.GetCache()}})
	if err != nil {
		return nil, fmt.Errorf("machine controller client: %w", err)
	}
	return c, nil
}

func wrap(what string, err error) error {
	if err != nil {
		return fmt.Errorf("set up %s: %w", what, err)
	}
	return nil
}

// featureGate is the machine API's gate set as OpenShift's default
// feature set has it: MachineAPIMigration off.
func featureGate() (featuregate.MutableFeatureGate, error) {
	gate := featuregate.NewFeatureGate()
	err := gate.Add(map[featuregate.Feature]featuregate.FeatureSpec{
		featuregate.Feature(openshiftfeatures.FeatureGateMachineAPIMigration): {Default: false, PreRelease: featuregate.Alpha},
	})
	if err != nil {
		return nil, fmt.Errorf("machine API feature gates: %w", err)
	}
	return gate, nil
}

// NodeImageURL is where the node image is served, and its SHA-256.
func (m *MachineAPI) NodeImageURL() (url, sha256 string) { return m.images.url(), m.images.checksum }

// Stop ends the upstream machine controller if it runs, then every
// controller in process, the image server and the webhook server, and
// waits for them.
func (m *MachineAPI) Stop() error {
	m.stopOnce.Do(func() {
		if m.external != nil {
			m.stopErr = stopExternal(m.external, m.opts.MachineController.Tracker)
		}
		m.cancel()
		<-m.done
		m.stopErr = errors.Join(m.stopErr, m.hooks.close())
	})
	return errors.Join(m.stopErr, m.runErr)
}

// MachineController says which machine controller runs: the upstream
// binary's main package and version, or the in-process port.
func (m *MachineAPI) MachineController() (implementation, version string) {
	if e := m.opts.MachineController; e != nil {
		return MachineControllerBuild(e.Binary)
	}
	return InProcessMachineController, ""
}

// InProcessMachineController names the port that runs without a binary.
const InProcessMachineController = "paritylab lab/mapi (port of cluster-api-provider-baremetal's actuator and Metal3Remediation controller)"
