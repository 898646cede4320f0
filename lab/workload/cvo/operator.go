package cvo

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/go-logr/logr"
	configv1 "github.com/openshift/api/config/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/paritylab/paritylab/providers/controlplane/release"
)

// Options configure an Operator. RESTConfig is required.
type Options struct {
	// RESTConfig reaches the workload cluster with rights on
	// clusterversions and clusterversions/status, to read
	// clusteroperators, and to read and annotate nodes.
	RESTConfig *rest.Config
	// UpgradeDuration is how long an accepted update stays Partial.
	// Default DefaultUpgradeDuration.
	UpgradeDuration time.Duration
	// Releases the lab knows besides the update graph (see Reconciler).
	Releases []configv1.Release
	// Payloads reads an update's release image (see Reconciler).
	Payloads release.Resolver
	// Logger is the manager's logger. Default discard.
	Logger logr.Logger
}

// Operator is a running simulated cluster-version operator: a
// controller-runtime manager on the workload cluster.
type Operator struct {
	cancel context.CancelFunc
	done   chan error
}

// Start runs the operator until Stop and returns once its cache is synced.
func Start(ctx context.Context, opts Options) (*Operator, error) {
	if opts.RESTConfig == nil {
		return nil, errors.New("cluster-version operator: RESTConfig is required")
	}
	if opts.Logger.GetSink() == nil {
		// Not logr.Discard(): its nil sink makes controller-runtime fall
		// back to its global logger.
		opts.Logger = logr.New(ctrllog.NullLogSink{})
	}
	mgr, err := newManager(opts)
	if err != nil {
		return nil, err
	}
	r := &Reconciler{Client: mgr.GetClient(), UpgradeDuration: opts.UpgradeDuration, Releases: opts.Releases, Payloads: opts.Payloads}
	if err := r.SetupWithManager(mgr); err != nil {
		return nil, fmt.Errorf("set up cluster-version operator: %w", err)
	}
	runCtx, cancel := context.WithCancel(context.Background())
	op := &Operator{cancel: cancel, done: make(chan error, 1)}
	go func() { op.done <- mgr.Start(runCtx) }()
	if !mgr.GetCache().WaitForCacheSync(ctx) {
		return nil, errors.Join(errors.New("wait for cluster-version operator cache: cancelled"), op.Stop())
	}
	return op, nil
}

func newManager(opts Options) (ctrl.Manager, error) {
	scheme := runtime.NewScheme()
	if err := configv1.Install(scheme); err != nil {
		return nil, fmt.Errorf("register config.openshift.io types: %w", err)
	}
	if err := corev1.AddToScheme(scheme); err != nil {
		return nil, fmt.Errorf("register core types: %w", err)
	}
	mgr, err := ctrl.NewManager(opts.RESTConfig, ctrl.Options{
		Scheme: scheme,
		Logger: opts.Logger,
		// Every workload cluster of a run has its own operator, all with
		// the same controller name; only metrics care, and they are off.
		Controller:             config.Controller{SkipNameValidation: ptr.To(true)},
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		Cache: cache.Options{ByObject: map[client.Object]cache.ByObject{
			&configv1.ClusterVersion{}: {Field: fields.OneTermEqualSelector("metadata.name", Name)},
		}},
	})
	if err != nil {
		return nil, fmt.Errorf("create cluster-version operator manager: %w", err)
	}
	return mgr, nil
}

// Stop stops the operator and waits for it. It is safe to call twice.
func (o *Operator) Stop() error {
	o.cancel()
	err := <-o.done
	o.done <- err
	if err != nil {
		return fmt.Errorf("stop cluster-version operator: %w", err)
	}
	return nil
}
