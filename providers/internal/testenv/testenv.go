package testenv

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	goruntime "runtime"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/go-logr/logr"
	configv1 "github.com/openshift/api/config/v1"
	hivev1 "github.com/openshift/hive/apis/hive/v1"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	crconfig "sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/webhook"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	capiagentv1 "github.com/paritylab/paritylab/providers/agent/api/v1beta1"
	bootstrapv1 "github.com/paritylab/paritylab/providers/bootstrap/api/v1alpha2"
	"github.com/paritylab/paritylab/providers/config"
	controlplanev1 "github.com/paritylab/paritylab/providers/controlplane/api/v1alpha3"
	agentv1beta1 "github.com/paritylab/paritylab/providers/thirdparty/agentinstall/v1beta1"
	hiveextv1beta1 "github.com/paritylab/paritylab/providers/thirdparty/hiveextensions/v1beta1"
)

// Options say what to run.
type Options struct {
	// Setup registers the controllers and webhooks under test with the
	// manager. Nil runs no controller (webhooks of every provider are
	// still configured in the API server, so Setup must register a
	// provider's webhooks when a test creates its objects).
	Setup func(ctx context.Context, mgr ctrl.Manager) error
	// ClusterVersion installs OpenShift's ClusterVersion CRD, for tests
	// that use the API server as the workload cluster too.
	ClusterVersion bool
	// CRDs are installed besides the usual ones: a test's stand-ins for
	// APIs the providers read but the environment does not have.
	CRDs []*apiextensionsv1.CustomResourceDefinition
	// WithoutWebhooksFor are API groups whose validating webhooks the API
	// server is not told of, for tests of what a controller does with
	// objects the webhooks would refuse (written before they existed).
	WithoutWebhooksFor []string
}

// Environment is a running API server and manager.
type Environment struct {
	// Config reaches the API server as an administrator.
	Config *rest.Config
	// Client is an uncached client for tests.
	Client client.Client
	// Manager runs the controllers and webhooks of Options.Setup. Tests may
	// add more controllers to it while it runs; it starts them at once.
	Manager ctrl.Manager

	env    *envtest.Environment
	cancel context.CancelFunc
	done   chan error
}

// Scheme registers every type the providers read or write.
func Scheme() *runtime.Scheme {
	s := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{
		clientgoscheme.AddToScheme, apiextensionsv1.AddToScheme, clusterv1.AddToScheme,
		hivev1.AddToScheme, agentv1beta1.AddToScheme, hiveextv1beta1.AddToScheme,
		bootstrapv1.AddToScheme, controlplanev1.AddToScheme, capiagentv1.AddToScheme, configv1.Install,
	} {
		if err := add(s); err != nil {
			panic(fmt.Sprintf("build test scheme: %v", err))
		}
	}
	return s
}

// Start starts the API server with every CRD and webhook configuration
// installed and a manager serving the webhooks. Set PROVIDERS_TEST_LOG=1 to
// see the controllers' logs.
func Start(opts Options) (_ *Environment, retErr error) {
	ctrl.SetLogger(logger())
	assets, err := AssetsDir()
	if err != nil {
		return nil, err
	}
	all, err := crds(opts.ClusterVersion)
	if err != nil {
		return nil, err
	}
	all = append(all, opts.CRDs...)
	hooks, err := webhookConfigurations(opts.WithoutWebhooksFor)
	if err != nil {
		return nil, err
	}
	scheme := Scheme()
	env := &envtest.Environment{
		BinaryAssetsDirectory:    assets,
		CRDs:                     all,
		CRDInstallOptions:        envtest.CRDInstallOptions{Scheme: scheme},
		WebhookInstallOptions:    envtest.WebhookInstallOptions{ValidatingWebhooks: hooks.Validating, MutatingWebhooks: hooks.Mutating},
		ErrorIfCRDPathMissing:    true,
		ControlPlaneStartTimeout: 2 * time.Minute,
		ControlPlaneStopTimeout:  time.Minute,
	}
	cfg, err := env.Start()
	if err != nil {
		return nil, fmt.Errorf("start envtest: %w", err)
	}
	e := &Environment{Config: cfg, env: env}
	defer func() {
		if retErr != nil {
			retErr = errors.Join(retErr, e.Stop())
		}
	}()
	if e.Client, err = client.New(cfg, client.Options{Scheme: scheme}); err != nil {
		return nil, fmt.Errorf("create test client: %w", err)
	}
	if err := e.startManager(scheme, opts.Setup); err != nil {
		return nil, err
	}
	return e, nil
}

func webhookConfigurations(skipGroups []string) (*config.Webhooks, error) {
	out := &config.Webhooks{}
	for _, m := range []config.Manifests{config.Bootstrap(), config.ControlPlane(), config.Agent()} {
		w, err := m.LoadWebhooks()
		if err != nil {
			return nil, err
		}
		out.Mutating = append(out.Mutating, w.Mutating...)
		for _, c := range w.Validating {
			c.Webhooks = slices.DeleteFunc(c.Webhooks, func(h admissionregistrationv1.ValidatingWebhook) bool {
				return slices.ContainsFunc(h.Rules, func(r admissionregistrationv1.RuleWithOperations) bool {
					return slices.ContainsFunc(r.APIGroups, func(g string) bool { return slices.Contains(skipGroups, g) })
				})
			})
			if len(c.Webhooks) > 0 {
				out.Validating = append(out.Validating, c)
			}
		}
	}
	// Every kubebuilder project names its configurations alike.
	for i, c := range out.Validating {
		c.Name = fmt.Sprintf("%s-%d", c.Name, i)
	}
	for i, c := range out.Mutating {
		c.Name = fmt.Sprintf("%s-%d", c.Name, i)
	}
	return out, nil
}

func (e *Environment) startManager(scheme *runtime.Scheme, setup func(context.Context, ctrl.Manager) error) error {
	w := e.env.WebhookInstallOptions
	mgr, err := ctrl.NewManager(e.Config, ctrl.Options{
		Scheme:                 scheme,
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		Controller:             crconfig.Controller{SkipNameValidation: ptr.To(true)},
		WebhookServer: webhook.NewServer(webhook.Options{
			Host: w.LocalServingHost, Port: w.LocalServingPort, CertDir: w.LocalServingCertDir,
		}),
		Client: client.Options{Cache: &client.CacheOptions{
			DisableFor: []client.Object{&corev1.Secret{}, &corev1.ConfigMap{}},
		}},
	})
	if err != nil {
		return fmt.Errorf("create manager: %w", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	if setup != nil {
		if err := setup(ctx, mgr); err != nil {
			cancel()
			return fmt.Errorf("set up controllers: %w", err)
		}
	}
	e.Manager, e.cancel, e.done = mgr, cancel, make(chan error, 1)
	go func() { e.done <- mgr.Start(ctx) }()
	if !mgr.GetCache().WaitForCacheSync(ctx) {
		return errors.New("wait for manager caches to sync: manager stopped")
	}
	return nil
}

// Kubeconfig returns a kubeconfig of an administrator of the API server,
// for tests that use it as a workload cluster.
func (e *Environment) Kubeconfig() ([]byte, error) {
	u, err := e.env.AddUser(envtest.User{Name: "workload-admin", Groups: []string{"system:masters"}}, nil)
	if err != nil {
		return nil, fmt.Errorf("add workload admin: %w", err)
	}
	return u.KubeConfig()
}

// Stop stops the manager and the API server. Safe to call twice.
func (e *Environment) Stop() error {
	var errs []error
	if e.cancel != nil {
		e.cancel()
		select {
		case err := <-e.done:
			errs = append(errs, err)
		case <-time.After(time.Minute):
			errs = append(errs, errors.New("stop manager: timed out"))
		}
		e.cancel = nil
	}
	if e.env != nil {
		errs = append(errs, e.env.Stop())
		e.env = nil
	}
	return errors.Join(errs...)
}

func logger() logr.Logger {
	if os.Getenv("PROVIDERS_TEST_LOG") != "" {
		return zap.New(zap.UseDevMode(true), zap.WriteTo(os.Stderr))
	}
	return zap.New(zap.WriteTo(io.Discard))
}

// Run is the body of a package's TestMain: it starts an environment with
// opts into *env, lets up to 16 tests run in parallel (RaiseParallelism),
// runs the tests and stops the environment. It returns the code for
// os.Exit: the tests', or 1 when the environment did not start.
func Run(m *testing.M, opts Options, env **Environment) int {
	e, err := Start(opts)
	if err != nil {
		fmt.Fprintln(os.Stderr, "start test environment:", err)
		return 1
	}
	*env = e
	RaiseParallelism(16)
	code := m.Run()
	if err := e.Stop(); err != nil {
		fmt.Fprintln(os.Stderr, "stop test environment:", err)
	}
	return code
}

// RaiseParallelism lets up to n parallel tests run at once unless -parallel
// was given: tests against the API server mostly wait, so GOMAXPROCS (the
// default) leaves the machine idle. Call it from TestMain before m.Run.
func RaiseParallelism(n int) {
	f := flag.Lookup("test.parallel")
	if f == nil || f.Value.String() != strconv.Itoa(goruntime.GOMAXPROCS(0)) {
		return
	}
	_ = f.Value.Set(strconv.Itoa(n))
}
