package assisted

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"

	bmov1alpha1 "github.com/metal3-io/baremetal-operator/apis/metal3.io/v1alpha1"
	hivev1 "github.com/openshift/hive/apis/hive/v1"
	"k8s.io/apimachinery/pkg/runtime"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/paritylab/paritylab/lab/controllers"
	"github.com/paritylab/paritylab/lab/crds"
	"github.com/paritylab/paritylab/lab/ports"
	"github.com/paritylab/paritylab/providers/controlplane/release"
	agentv1beta1 "github.com/paritylab/paritylab/providers/thirdparty/agentinstall/v1beta1"
	hiveextv1beta1 "github.com/paritylab/paritylab/providers/thirdparty/hiveextensions/v1beta1"
)

// Service is the lab's assisted service.
type Service struct {
	opts      Options
	tokens    *tokens
	registry  *registry
	events    *eventLog
	listener  net.Listener
	client    client.Client
	apiReader client.Reader

	// releases reads release images whose reference does not carry their
	// version (by digest).
	releases release.Remote

	// ironicAgent holds the InfraEnvs (by id) whose images carry the
	// ironic agent (the PreprovisioningImage controller adds it);
	// published, the discovery config of each InfraEnv's last image.
	ironicAgent sync.Map // string -> bool
	// discoveryMirror holds the mirror registry each InfraEnv's (by id)
	// discovery image gets, if any.
	discoveryMirror sync.Map // string -> *MirrorRegistry
	published       sync.Map // string -> agentapi.DiscoveryConfig

	// spokeClients caches an admin client per workload cluster.
	spokeClients sync.Map // ClusterKey -> client.Client

	nodeImageOnce sync.Once
	nodeImage     servedFile
	nodeImageErr  error
}

var _ controllers.Component = (*Service)(nil)

// New prepares the service and binds its loopback port; it serves once
// its manager starts.
func New(opts Options) (*Service, error) {
	if err := opts.defaults(); err != nil {
		return nil, err
	}
	t, err := newTokens()
	if err != nil {
		return nil, err
	}
	l, err := net.Listen("tcp", net.JoinHostPort(ports.Loopback, "0"))
	if err != nil {
		return nil, fmt.Errorf("listen for the agent API: %w", err)
	}
	s := &Service{opts: opts, tokens: t, registry: newRegistry(), events: newEventLog(), listener: l}
	s.releases.Dial = s.dialRegistry
	return s, nil
}

// Port is where the agent API and the images are served on loopback.
func (s *Service) Port() int { return s.listener.Addr().(*net.TCPAddr).Port }

// URL is the service's base URL on the host.
func (s *Service) URL() string {
	return "http://" + net.JoinHostPort(ports.Loopback, strconv.Itoa(s.Port()))
}

// Name implements controllers.Component.
func (*Service) Name() string { return "assisted" }

// AddToScheme implements controllers.Component.
func (*Service) AddToScheme(s *runtime.Scheme) error {
	for _, add := range []func(*runtime.Scheme) error{
		agentv1beta1.AddToScheme, hiveextv1beta1.AddToScheme, hivev1.AddToScheme, bmov1alpha1.AddToScheme,
	} {
		if err := add(s); err != nil {
			return err
		}
	}
	return nil
}

// CRDs implements controllers.Component: the assisted-service, hive and
// metal3 CRDs.
func (*Service) CRDs() []crds.Set { return []crds.Set{crds.Assisted(), crds.Hive()} }

// Webhooks implements controllers.Component: none.
func (*Service) Webhooks() (*controllers.WebhookConfigurations, error) { return nil, nil }

// WebhooksReady implements controllers.Component.
func (*Service) WebhooksReady(context.Context, client.Client) error { return nil }

// SetupWithManager registers the controllers and the HTTP server.
func (s *Service) SetupWithManager(ctx context.Context, mgr ctrl.Manager) error {
	s.client, s.apiReader = mgr.GetClient(), mgr.GetAPIReader()
	setups := []func(ctrl.Manager) error{
		s.setupInfraEnvController, s.setupAgentController, s.setupACIController, s.setupBMHController,
	}
	if s.opts.ConvergedFlow {
		setups = append(setups, s.setupPreprovImageController)
	}
	for _, setup := range setups {
		if err := setup(mgr); err != nil {
			return err
		}
	}
	return mgr.Add(s)
}

// Start serves the agent API and images until ctx ends (a manager
// Runnable).
func (s *Service) Start(ctx context.Context) error {
	mux := http.NewServeMux()
	s.routes(mux)
	s.fileRoutes(mux)
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		<-ctx.Done()
		shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(shutdown)
	}()
	s.opts.Logger.Info("Assisted service serving", "url", s.URL())
	if err := srv.Serve(s.listener); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("serve the agent API: %w", err)
	}
	return nil
}
