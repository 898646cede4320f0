package controllers

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/webhook"

	"github.com/paritylab/paritylab/lab/crds"
	"github.com/paritylab/paritylab/lab/pki"
	"github.com/paritylab/paritylab/lab/ports"
)

// Options configure a Host. RESTConfig, WebhookHost and CertDir are required.
type Options struct {
	// RESTConfig reaches the hub.
	RESTConfig *rest.Config
	// WebhookHost is the address the hub API server calls webhooks at
	// (hub.Hub.WebhookHost); the server listens there.
	WebhookHost string
	// CertDir receives the webhook serving certificate and key (0600).
	CertDir string
	// Components to run.
	Components []Component
	// ReadyTimeout bounds CRD establishment and webhook readiness. Default 2m.
	ReadyTimeout time.Duration
	// Logger is the manager's logger. Default discard.
	Logger logr.Logger

	// pickPort picks the webhook port; tests hand out a taken one.
	// Default ports.Free.
	pickPort func() (int, error)
}

// Host is a running manager.
type Host struct {
	opts   Options
	mgr    ctrl.Manager
	cancel context.CancelFunc
	done   chan error
}

// portAttempts bounds how often the host starts again on a new webhook
// port after another process took the one picked for it between the pick
// and the bind (lab/ports: a component that fails to bind picks again).
const portAttempts = 3

// Start installs the components' CRDs, starts the manager with its webhook
// server, installs the webhook configurations pointing at it and waits until
// the API server calls them. On error nothing keeps running.
func Start(ctx context.Context, opts Options) (*Host, error) {
	if err := opts.defaults(); err != nil {
		return nil, err
	}
	var err error
	for range portAttempts {
		var h *Host
		if h, err = start(ctx, opts); err == nil || !ports.Taken(err) {
			return h, err
		}
		opts.Logger.Info("Webhook port taken before the server bound it; starting again on another", "error", err.Error())
	}
	return nil, err
}

func start(ctx context.Context, opts Options) (_ *Host, retErr error) {
	scheme, err := opts.scheme()
	if err != nil {
		return nil, err
	}
	ep, err := opts.webhookEndpoint()
	if err != nil {
		return nil, err
	}
	if err := opts.installCRDs(scheme, ep); err != nil {
		return nil, err
	}
	h := &Host{opts: opts}
	if err := h.startManager(ctx, scheme, ep); err != nil {
		return nil, err
	}
	defer func() {
		if retErr != nil {
			retErr = errors.Join(retErr, h.Stop(context.Background()))
		}
	}()
	if err := h.installWebhooks(ctx, ep); err != nil {
		return nil, err
	}
	return h, h.waitWebhooksReady(ctx)
}

func (o *Options) defaults() error {
	switch {
	case o.RESTConfig == nil:
		return errors.New("controllers: RESTConfig is required")
	case o.WebhookHost == "":
		return errors.New("controllers: WebhookHost is required (this hub cannot call webhooks in this process)")
	case o.CertDir == "":
		return errors.New("controllers: CertDir is required")
	}
	if o.ReadyTimeout == 0 {
		o.ReadyTimeout = 2 * time.Minute
	}
	if o.Logger.GetSink() == nil {
		o.Logger = logr.Discard()
	}
	return nil
}

func (o *Options) scheme() (*runtime.Scheme, error) {
	s := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(s); err != nil {
		return nil, err
	}
	if err := apiextensionsv1.AddToScheme(s); err != nil {
		return nil, err
	}
	for _, c := range o.Components {
		if err := c.AddToScheme(s); err != nil {
			return nil, fmt.Errorf("register types of %s: %w", c.Name(), err)
		}
	}
	return s, nil
}

// webhookEndpoint picks the webhook port and writes a serving certificate
// for the webhook host.
func (o *Options) webhookEndpoint() (WebhookEndpoint, error) {
	pick := o.pickPort
	if pick == nil {
		pick = ports.Free
	}
	return newWebhookEndpoint(o.WebhookHost, o.CertDir, pick)
}

// NewWebhookEndpoint picks a free port for a webhook server on host and
// writes its serving certificate, signed by a CA of its own, to certDir as
// tls.crt and tls.key (0600), the names controller-runtime's server reads.
func NewWebhookEndpoint(host, certDir string) (WebhookEndpoint, error) {
	return newWebhookEndpoint(host, certDir, ports.Free)
}

func newWebhookEndpoint(host, certDir string, pick func() (int, error)) (WebhookEndpoint, error) {
	port, err := pick()
	if err != nil {
		return WebhookEndpoint{}, err
	}
	ca, err := pki.NewCA("paritylab-webhook-ca")
	if err != nil {
		return WebhookEndpoint{}, err
	}
	serving, err := ca.ServingCert("paritylab-webhooks", host, "localhost")
	if err != nil {
		return WebhookEndpoint{}, err
	}
	if err := os.MkdirAll(certDir, 0o700); err != nil {
		return WebhookEndpoint{}, fmt.Errorf("create webhook cert dir: %w", err)
	}
	if err := serving.WriteFiles(filepath.Join(certDir, "tls.crt"), filepath.Join(certDir, "tls.key")); err != nil {
		return WebhookEndpoint{}, fmt.Errorf("write webhook serving certificate: %w", err)
	}
	return WebhookEndpoint{Host: host, Port: port, CABundle: ca.CertPEM()}, nil
}

func (o *Options) installCRDs(scheme *runtime.Scheme, ep WebhookEndpoint) error {
	var sets []crds.Set
	for _, c := range o.Components {
		sets = append(sets, c.CRDs()...)
	}
	return crds.Install(o.RESTConfig, crds.InstallInput{
		Sets:    sets,
		Scheme:  scheme,
		Timeout: o.ReadyTimeout,
		Conversion: &crds.ConversionWebhook{
			Host: ep.Host, Port: ep.Port, CABundle: ep.CABundle,
		},
	})
}

func (h *Host) startManager(ctx context.Context, scheme *runtime.Scheme, ep WebhookEndpoint) error {
	mgr, err := ctrl.NewManager(h.opts.RESTConfig, ctrl.Options{
		Scheme: scheme,
		Logger: h.opts.Logger,
		// One process may run a lab more than once (suites, benchmarks);
		// controller names then repeat across managers, which only
		// matters for metrics, and metrics are off.
		Controller:             config.Controller{SkipNameValidation: ptr.To(true)},
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		WebhookServer: webhook.NewServer(webhook.Options{
			Host: ep.Host, Port: ep.Port, CertDir: h.opts.CertDir,
		}),
		Client: client.Options{Cache: &client.CacheOptions{
			// As Cluster API's manager does: read Secrets and ConfigMaps
			// live, and serve unstructured reads from the cache.
			DisableFor:   []client.Object{&corev1.Secret{}, &corev1.ConfigMap{}},
			Unstructured: true,
		}},
	})
	if err != nil {
		return fmt.Errorf("create manager: %w", err)
	}
	// Components get the manager's lifetime, not the caller's context:
	// upstream setup code starts goroutines that live as long as that
	// context (CAPI's cluster cache, for one).
	runCtx, cancel := context.WithCancel(context.Background())
	for _, c := range h.opts.Components {
		if err := c.SetupWithManager(runCtx, mgr); err != nil {
			cancel()
			return fmt.Errorf("set up %s: %w", c.Name(), err)
		}
	}
	h.mgr, h.cancel, h.done = mgr, cancel, make(chan error, 1)
	go func() { h.done <- mgr.Start(runCtx) }()
	return h.waitServing(ctx)
}

// waitServing waits until the webhook server accepts connections and the
// caches are synced, or the manager fails.
func (h *Host) waitServing(ctx context.Context) error {
	started := h.mgr.GetWebhookServer().StartedChecker()
	err := wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, h.opts.ReadyTimeout, true, func(context.Context) (bool, error) {
		select {
		case err := <-h.done:
			h.done <- err
			return false, fmt.Errorf("manager stopped: %w", err)
		default:
		}
		return started(nil) == nil, nil
	})
	if err != nil {
		return fmt.Errorf("wait for webhook server: %w", err)
	}
	if !h.mgr.GetCache().WaitForCacheSync(ctx) {
		return errors.New("wait for manager caches to sync: cancelled")
	}
	return nil
}

func (h *Host) installWebhooks(ctx context.Context, ep WebhookEndpoint) error {
	for _, c := range h.opts.Components {
		cfgs, err := c.Webhooks()
		if err != nil {
			return fmt.Errorf("webhooks of %s: %w", c.Name(), err)
		}
		if cfgs == nil {
			continue
		}
		if err := cfgs.pointAt(ep, c.Name()); err != nil {
			return fmt.Errorf("webhooks of %s: %w", c.Name(), err)
		}
		if err := cfgs.apply(ctx, h.mgr.GetClient()); err != nil {
			return fmt.Errorf("webhooks of %s: %w", c.Name(), err)
		}
	}
	return nil
}

func (h *Host) waitWebhooksReady(ctx context.Context) error {
	for _, c := range h.opts.Components {
		var last error
		err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, h.opts.ReadyTimeout, true, func(ctx context.Context) (bool, error) {
			last = c.WebhooksReady(ctx, h.mgr.GetClient())
			return last == nil, nil
		})
		if err != nil {
			return fmt.Errorf("webhooks of %s not called by the API server: %w", c.Name(), errors.Join(err, last))
		}
	}
	return nil
}

// Manager is the running controller-runtime manager.
func (h *Host) Manager() ctrl.Manager { return h.mgr }

// Client is the manager's client.
func (h *Host) Client() client.Client { return h.mgr.GetClient() }

// Stop stops the manager and waits for it, bounded by ctx. Safe to call twice.
func (h *Host) Stop(ctx context.Context) error {
	if h.cancel == nil {
		return nil
	}
	h.cancel()
	select {
	case err := <-h.done:
		h.done <- err
		return err
	case <-ctx.Done():
		return fmt.Errorf("stop controllers: %w", ctx.Err())
	}
}
