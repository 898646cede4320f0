package capi

import (
	"context"
	"fmt"
	"path/filepath"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/sets"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"

	addonsv1beta1 "sigs.k8s.io/cluster-api/api/addons/v1beta1"
	addonsv1 "sigs.k8s.io/cluster-api/api/addons/v1beta2"
	clusterv1beta1 "sigs.k8s.io/cluster-api/api/core/v1beta1"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/cluster-api/api/core/v1beta2/index"
	ipamv1alpha1 "sigs.k8s.io/cluster-api/api/ipam/v1alpha1"
	ipamv1beta1 "sigs.k8s.io/cluster-api/api/ipam/v1beta1"
	ipamv1 "sigs.k8s.io/cluster-api/api/ipam/v1beta2"
	runtimev1alpha1 "sigs.k8s.io/cluster-api/api/runtime/v1alpha1"
	runtimev1 "sigs.k8s.io/cluster-api/api/runtime/v1beta2"
	"sigs.k8s.io/cluster-api/controllers/clustercache"

	"github.com/paritylab/paritylab/lab/controllers"
	"github.com/paritylab/paritylab/lab/crds"
)

// Module is the Go module the controllers, CRDs and webhook manifests come
// from.
const Module = "sigs.k8s.io/cluster-api"

// Options tune the core controllers.
type Options struct {
	// Concurrency is MaxConcurrentReconciles of every controller.
	// Default 10, as upstream.
	Concurrency int
	// RemoteConnectionGracePeriod and RemoteConditionsGracePeriod are the
	// upstream flags of the same names. Defaults 50s and 5m, as upstream.
	RemoteConnectionGracePeriod time.Duration
	RemoteConditionsGracePeriod time.Duration
}

// Core is the Cluster API core component.
type Core struct {
	opts Options
}

var _ controllers.Component = (*Core)(nil)

// New returns the CAPI core component.
func New(opts Options) *Core {
	if opts.Concurrency == 0 {
		opts.Concurrency = 10
	}
	if opts.RemoteConnectionGracePeriod == 0 {
		opts.RemoteConnectionGracePeriod = 50 * time.Second
	}
	if opts.RemoteConditionsGracePeriod == 0 {
		opts.RemoteConditionsGracePeriod = 5 * time.Minute
	}
	return &Core{opts: opts}
}

// Name implements controllers.Component.
func (*Core) Name() string { return "capi" }

// AddToScheme registers every API version CAPI's manager serves that is
// public (v1alpha3/4 live in CAPI's internal packages and are not served).
func (*Core) AddToScheme(s *runtime.Scheme) error {
	for _, add := range []func(*runtime.Scheme) error{
		clusterv1beta1.AddToScheme, clusterv1.AddToScheme,
		addonsv1beta1.AddToScheme, addonsv1.AddToScheme,
		ipamv1alpha1.AddToScheme, ipamv1beta1.AddToScheme, ipamv1.AddToScheme,
		runtimev1alpha1.AddToScheme, runtimev1.AddToScheme,
	} {
		if err := add(s); err != nil {
			return err
		}
	}
	return nil
}

// CRDs implements controllers.Component.
func (*Core) CRDs() []crds.Set { return []crds.Set{crds.ClusterAPI()} }

// Webhooks reads CAPI's generated webhook manifests from the module.
func (*Core) Webhooks() (*controllers.WebhookConfigurations, error) {
	dir, err := crds.ModuleDir(Module)
	if err != nil {
		return nil, err
	}
	return controllers.ReadWebhookManifests(filepath.Join(dir, "config", "webhook", "manifests.yaml"))
}

// SetupWithManager wires indexes, the cluster cache, the reconcilers and
// the webhooks.
func (c *Core) SetupWithManager(ctx context.Context, mgr ctrl.Manager) error {
	cache, err := c.setupControllers(ctx, mgr)
	if err != nil {
		return err
	}
	return setupWebhooks(ctx, mgr, cache)
}

// SetupControllers wires the indexes, the cluster cache and the
// reconcilers, without webhooks: a second Cluster API beside the
// platform's, as HyperShift runs one per hosted control plane on its
// private types (whose CRDs call no webhook of this CAPI), restricted to
// what the manager's cache sees.
func SetupControllers(ctx context.Context, mgr ctrl.Manager, opts Options) error {
	_, err := New(opts).setupControllers(ctx, mgr)
	return err
}

func (c *Core) setupControllers(ctx context.Context, mgr ctrl.Manager) (clustercache.ClusterCache, error) {
	if err := index.AddDefaultIndexes(ctx, mgr); err != nil {
		return nil, fmt.Errorf("add CAPI indexes: %w", err)
	}
	cache, err := setupClusterCache(ctx, mgr, c.controllerOptions())
	if err != nil {
		return nil, err
	}
	return cache, c.setupReconcilers(ctx, mgr, cache)
}

func (c *Core) controllerOptions() controller.Options {
	return controller.Options{MaxConcurrentReconciles: c.opts.Concurrency}
}

// defaultPreflightChecks are the MachineSet preflight checks upstream runs
// by default (all of them).
func defaultPreflightChecks() sets.Set[clusterv1.MachineSetPreflightCheck] {
	return sets.New(clusterv1.MachineSetPreflightCheckAll)
}

// apiVersionGetter answers, for a provider kind, which of its API versions
// implements the newest contract this CAPI honours, from the contract label
// on its CRD; v1beta1 conversion needs it to fill apiVersion from apiGroup.
func apiVersionGetter(ctx context.Context, r client.Reader) func(schema.GroupKind) (string, error) {
	return func(gk schema.GroupKind) (string, error) {
		ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		return crds.ContractAPIVersion(ctx, r, gk)
	}
}
