package agentproviders

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/runtime"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/paritylab/paritylab/lab/controllers"
	"github.com/paritylab/paritylab/lab/crds"
	"github.com/paritylab/paritylab/providers/bootstrap"
	"github.com/paritylab/paritylab/providers/config"
	"github.com/paritylab/paritylab/providers/controlplane"
)

// Bootstrap is the bootstrap provider component.
type Bootstrap struct {
	opts bootstrap.Options
}

// ControlPlane is the control-plane provider component.
type ControlPlane struct {
	opts controlplane.Options
}

var (
	_ controllers.Component = (*Bootstrap)(nil)
	_ controllers.Component = (*ControlPlane)(nil)
)

// Options configure both providers; their zero values work.
type Options struct {
	Bootstrap    bootstrap.Options
	ControlPlane controlplane.Options
}

// New returns both providers' components.
func New(opts Options) []controllers.Component {
	return []controllers.Component{NewBootstrap(opts.Bootstrap), NewControlPlane(opts.ControlPlane)}
}

// NewBootstrap returns the bootstrap provider component.
func NewBootstrap(opts bootstrap.Options) *Bootstrap { return &Bootstrap{opts: opts} }

// NewControlPlane returns the control-plane provider component.
func NewControlPlane(opts controlplane.Options) *ControlPlane { return &ControlPlane{opts: opts} }

// Name implements controllers.Component.
func (*Bootstrap) Name() string { return "openshift-assisted-bootstrap" }

// Name implements controllers.Component.
func (*ControlPlane) Name() string { return "openshift-assisted-controlplane" }

// AddToScheme implements controllers.Component.
func (*Bootstrap) AddToScheme(s *runtime.Scheme) error { return bootstrap.AddToScheme(s) }

// AddToScheme implements controllers.Component.
func (*ControlPlane) AddToScheme(s *runtime.Scheme) error { return controlplane.AddToScheme(s) }

// CRDs implements controllers.Component: the provider's own CRDs, which
// carry their Cluster API contract label.
func (*Bootstrap) CRDs() []crds.Set { return []crds.Set{set(config.Bootstrap())} }

// CRDs implements controllers.Component.
func (*ControlPlane) CRDs() []crds.Set { return []crds.Set{set(config.ControlPlane())} }

func set(m config.Manifests) crds.Set {
	return crds.Set{Name: m.Name, FS: m.FS, Files: m.CRDs}
}

// Webhooks implements controllers.Component.
func (*Bootstrap) Webhooks() (*controllers.WebhookConfigurations, error) {
	return webhooks(config.Bootstrap())
}

// Webhooks implements controllers.Component.
func (*ControlPlane) Webhooks() (*controllers.WebhookConfigurations, error) {
	return webhooks(config.ControlPlane())
}

func webhooks(m config.Manifests) (*controllers.WebhookConfigurations, error) {
	w, err := m.LoadWebhooks()
	if err != nil {
		return nil, err
	}
	out := &controllers.WebhookConfigurations{}
	for _, c := range w.Mutating {
		out.Mutating = append(out.Mutating, *c)
	}
	for _, c := range w.Validating {
		out.Validating = append(out.Validating, *c)
	}
	return out, nil
}

// SetupWithManager implements controllers.Component.
func (b *Bootstrap) SetupWithManager(ctx context.Context, mgr ctrl.Manager) error {
	if err := bootstrap.SetupWithManager(ctx, mgr, b.opts); err != nil {
		return fmt.Errorf("set up the bootstrap provider: %w", err)
	}
	return nil
}

// SetupWithManager implements controllers.Component.
func (c *ControlPlane) SetupWithManager(ctx context.Context, mgr ctrl.Manager) error {
	if err := controlplane.SetupWithManager(ctx, mgr, c.opts); err != nil {
		return fmt.Errorf("set up the control-plane provider: %w", err)
	}
	return nil
}
