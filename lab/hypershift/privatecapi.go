package hypershift

import (
	"context"
	"errors"
	"fmt"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	crconfig "sigs.k8s.io/controller-runtime/pkg/config"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/paritylab/paritylab/lab/capi"
	"github.com/paritylab/paritylab/lab/hypershift/apiproxy"
)

// PrivateCAPIOptions configure a hosted cluster's own Cluster API.
type PrivateCAPIOptions struct {
	// Hub is the hub's client configuration; the proxy carries its
	// credentials. Required.
	Hub *rest.Config
	// Namespace is the control-plane namespace, the only one this CAPI
	// reconciles (HyperShift's cluster-api Deployment runs with
	// --namespace). Required.
	Namespace string
	// Logger receives the controllers' logs.
	Logger logr.Logger
}

// PrivateCAPI is Cluster API core for one hosted cluster on HyperShift's
// private types: upstream's reconcilers, unmodified, in a manager that
// reaches the hub through the API proxy, so they speak cluster.x-k8s.io
// while the hub stores cluster.hypershift.openshift.io. It runs no
// webhook (the private CRDs call none), and its cache holds only the
// control-plane namespace, so it never meets the platform's CAPI objects
// nor those of another hosted cluster.
type PrivateCAPI struct {
	proxy  *apiproxy.Server
	cancel context.CancelFunc
	done   chan error
}

// StartPrivateCAPI starts the proxy and the controllers. On error nothing
// keeps running.
func StartPrivateCAPI(ctx context.Context, opts PrivateCAPIOptions) (*PrivateCAPI, error) {
	if opts.Hub == nil || opts.Namespace == "" {
		return nil, errors.New("private CAPI: Hub and Namespace are required")
	}
	proxy, err := apiproxy.Serve(opts.Hub, opts.Logger.WithName("apiproxy"))
	if err != nil {
		return nil, err
	}
	mgr, err := privateCAPIManager(ctx, proxy.RESTConfig(), opts)
	if err != nil {
		return nil, errors.Join(err, proxy.Stop())
	}
	mctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	p := &PrivateCAPI{proxy: proxy, cancel: cancel, done: make(chan error, 1)}
	go func() { p.done <- mgr.Start(mctx) }()
	return p, nil
}

func privateCAPIManager(ctx context.Context, cfg *rest.Config, opts PrivateCAPIOptions) (ctrl.Manager, error) {
	core := capi.New(capi.Options{})
	scheme := runtime.NewScheme()
	if err := errors.Join(clientgoscheme.AddToScheme(scheme), core.AddToScheme(scheme)); err != nil {
		return nil, err
	}
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme:                 scheme,
		Cache:                  cache.Options{DefaultNamespaces: map[string]cache.Config{opts.Namespace: {}}},
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		// Every hosted cluster and the platform run the same controllers
		// in this process.
		Controller: crconfig.Controller{SkipNameValidation: ptr.To(true)},
		Logger:     opts.Logger,
	})
	if err != nil {
		return nil, fmt.Errorf("private CAPI of %s: %w", opts.Namespace, err)
	}
	if err := capi.SetupControllers(ctx, mgr, capi.Options{}); err != nil {
		return nil, fmt.Errorf("private CAPI of %s: %w", opts.Namespace, err)
	}
	return mgr, nil
}

// ProxyConfig is a client configuration of this CAPI's proxy: what its
// controllers see.
func (p *PrivateCAPI) ProxyConfig() *rest.Config { return p.proxy.RESTConfig() }

// Running says whether the controllers still run.
func (p *PrivateCAPI) Running() bool {
	select {
	case err := <-p.done:
		p.done <- err // leave it for Stop
		return false
	default:
		return true
	}
}

// Stop ends the controllers, then the proxy.
func (p *PrivateCAPI) Stop() error {
	p.cancel()
	return errors.Join(<-p.done, p.proxy.Stop())
}
