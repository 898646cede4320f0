package controllers

import (
	"context"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/runtime"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/paritylab/paritylab/lab/crds"
)

// Component is a set of controllers and webhooks run in process.
type Component interface {
	// Name identifies the component in logs and webhook configuration names.
	Name() string
	// AddToScheme registers every API type the component reads or writes.
	AddToScheme(s *runtime.Scheme) error
	// CRDs are installed before the manager starts.
	CRDs() []crds.Set
	// Webhooks returns the component's admission webhook configurations as
	// generated for an in-cluster Service; the host points them at its own
	// server.
	Webhooks() (*WebhookConfigurations, error)
	// SetupWithManager registers controllers and webhook handlers.
	SetupWithManager(ctx context.Context, mgr ctrl.Manager) error
	// WebhooksReady returns nil once the API server calls the component's
	// webhooks (configurations take effect asynchronously). It may use c to
	// send dry-run requests. Components without webhooks return nil.
	WebhooksReady(ctx context.Context, c client.Client) error
}

// WebhookConfigurations are admission webhook configurations.
type WebhookConfigurations struct {
	Mutating   []admissionregistrationv1.MutatingWebhookConfiguration
	Validating []admissionregistrationv1.ValidatingWebhookConfiguration
}

// CRDsOnly is a component that installs CRDs and registers their types but
// runs no controllers, for APIs whose controllers live elsewhere.
type CRDsOnly struct {
	ComponentName string
	Sets          []crds.Set
	Schemes       []func(*runtime.Scheme) error
}

var _ Component = (*CRDsOnly)(nil)

// Name implements Component.
func (c *CRDsOnly) Name() string { return c.ComponentName }

// AddToScheme implements Component.
func (c *CRDsOnly) AddToScheme(s *runtime.Scheme) error {
	for _, add := range c.Schemes {
		if err := add(s); err != nil {
			return err
		}
	}
	return nil
}

// CRDs implements Component.
func (c *CRDsOnly) CRDs() []crds.Set { return c.Sets }

// Webhooks implements Component: none.
func (c *CRDsOnly) Webhooks() (*WebhookConfigurations, error) { return nil, nil }

// SetupWithManager implements Component: nothing to run.
func (c *CRDsOnly) SetupWithManager(context.Context, ctrl.Manager) error { return nil }

// WebhooksReady implements Component: no webhooks.
func (c *CRDsOnly) WebhooksReady(context.Context, client.Client) error { return nil }
