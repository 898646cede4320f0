package hypershift

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/go-logr/logr"
	configv1 "github.com/openshift/api/config/v1"
	hypershiftv1beta1 "github.com/openshift/hypershift/api/hypershift/v1beta1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/record"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/webhook/conversion"

	"github.com/paritylab/paritylab/lab/agentproviders"
	"github.com/paritylab/paritylab/lab/capi"
	"github.com/paritylab/paritylab/lab/controllers"
	"github.com/paritylab/paritylab/lab/crds"
	"github.com/paritylab/paritylab/lab/hypershift/apiproxy"
	"github.com/paritylab/paritylab/lab/ports"
	"github.com/paritylab/paritylab/lab/state"
	"github.com/paritylab/paritylab/lab/workload"
	"github.com/paritylab/paritylab/providers/agent"
)

// Options configure the operator stand-in.
type Options struct {
	// StateDir holds each hosted control plane's directory,
	// StateDir/hosted/<control-plane namespace>. Required.
	StateDir string
	// LogDir, when set, receives each hosted control plane's logs in
	// LogDir/hosted/<control-plane namespace>; otherwise they stay in its
	// directory and go with it.
	LogDir string
	// Tracker records the hosted control planes' processes and
	// directories, so that lab down reaps what a crash left. Default
	// state.Discard.
	Tracker state.Tracker
	// Releases are the releases the lab knows: a HostedCluster's release
	// image among them gives its version. Another image installs
	// workload.DefaultVersion.
	Releases []configv1.Release
	// AdvertiseHost is the host the ignition endpoint and, without a
	// NodePort address, the control-plane endpoint name. Default
	// 127.0.0.1, the host's loopback, as the hub names the lab's other
	// services: every lab guest reaches it at its own gateway (its
	// user-mode subnet's .2), where the lab agent dials it.
	AdvertiseHost string
	// Logger receives the operator's progress.
	Logger logr.Logger
}

// Operator is the lab's HyperShift operator on the agent platform, a
// controllers.Component: it runs one hosted control plane, ignition
// server and agent provider manager per HostedCluster.
type Operator struct {
	opts   Options
	client client.Client
	// apiReader reads what the cache may not have caught up with (the
	// Secrets the operator writes itself).
	apiReader client.Reader
	config    *rest.Config
	scheme    *runtime.Scheme

	mu     sync.Mutex
	hosted map[types.NamespacedName]*hostedRuntime
	// locks are held by migrations (migration.go).
	locks           map[types.NamespacedName]*sync.Mutex
	recorder        record.EventRecorder
	migrationTiming migrationTiming

	// proxy and proxied reach private types (privatetypes.go).
	proxyMu sync.Mutex
	proxy   *apiproxy.Server
	proxied client.Client
}

var _ controllers.Component = (*Operator)(nil)

// New returns the operator component.
func New(opts Options) (*Operator, error) {
	if opts.StateDir == "" {
		return nil, errors.New("hypershift operator: Options.StateDir is required")
	}
	if opts.Tracker == nil {
		opts.Tracker = state.Discard
	}
	if opts.AdvertiseHost == "" {
		opts.AdvertiseHost = ports.Loopback
	}
	return &Operator{opts: opts, hosted: map[types.NamespacedName]*hostedRuntime{},
		migrationTiming: migrationTiming{window: healthWindow, timeout: healthTimeout}}, nil
}

// Name implements controllers.Component.
func (*Operator) Name() string { return "hypershift" }

// AddToScheme implements controllers.Component: HyperShift's types, the
// agent provider's, and CAPI core's (HyperShift writes v1beta1; the
// conversion shim converts every version).
func (*Operator) AddToScheme(s *runtime.Scheme) error {
	for _, add := range []func(*runtime.Scheme) error{
		hypershiftv1beta1.AddToScheme, agent.AddToScheme, capi.New(capi.Options{}).AddToScheme,
	} {
		if err := add(s); err != nil {
			return fmt.Errorf("register HyperShift operator types: %w", err)
		}
	}
	return nil
}

// CRDs implements controllers.Component: HostedCluster, NodePool,
// HostedControlPlane and, as HyperShift's install brings them, the agent
// provider's and CAPI's private types. The platform's CAPI CRDs come
// with its component.
func (*Operator) CRDs() []crds.Set {
	return []crds.Set{crds.HyperShift(), crds.HostedControlPlane(), agentproviders.AgentCRDs(), PrivateClusterAPI()}
}

// Webhooks implements controllers.Component: HyperShift's webhooks are
// not emulated.
func (*Operator) Webhooks() (*controllers.WebhookConfigurations, error) { return nil, nil }

// WebhooksReady implements controllers.Component.
func (*Operator) WebhooksReady(context.Context, client.Client) error { return nil }

// SetupWithManager implements controllers.Component.
func (o *Operator) SetupWithManager(_ context.Context, mgr ctrl.Manager) error {
	o.client, o.apiReader, o.config, o.scheme = mgr.GetClient(), mgr.GetAPIReader(), mgr.GetConfig(), mgr.GetScheme()
	mgr.GetWebhookServer().Register(PrivateConversionPath,
		apiproxy.ConversionShim(conversion.NewWebhookHandler(mgr.GetScheme(), mgr.GetConverterRegistry())))
	err := ctrl.NewControllerManagedBy(mgr).Named("hypershift-hostedcluster").
		For(&hypershiftv1beta1.HostedCluster{}).
		Complete(reconcile.Func(o.reconcileHostedCluster))
	if err != nil {
		return fmt.Errorf("set up the HostedCluster controller: %w", err)
	}
	if err := o.setupNodePoolController(mgr); err != nil {
		return fmt.Errorf("set up the NodePool controller: %w", err)
	}
	if err := o.setupMigrationController(mgr); err != nil {
		return fmt.Errorf("set up the private CAPI types migration controller: %w", err)
	}
	return nil
}

// Stop ends every hosted cluster's processes (lab teardown; their objects
// stay).
func (o *Operator) Stop() error {
	o.mu.Lock()
	all := o.hosted
	o.hosted = map[types.NamespacedName]*hostedRuntime{}
	o.mu.Unlock()
	var errs []error
	for _, h := range all {
		errs = append(errs, h.stop())
	}
	return errors.Join(append(errs, o.stopProxy())...)
}

// HostedAPI returns the hosted control plane of a HostedCluster, or nil
// while it does not run: for scenarios and tests.
func (o *Operator) HostedAPI(key types.NamespacedName) *workload.Cluster {
	o.mu.Lock()
	defer o.mu.Unlock()
	if h := o.hosted[key]; h != nil {
		return h.cluster
	}
	return nil
}
