package capm3

import (
	"context"
	"errors"
	"fmt"
	"time"

	bmov1alpha1 "github.com/metal3-io/baremetal-operator/apis/metal3.io/v1alpha1"
	capm3v1beta1 "github.com/metal3-io/cluster-api-provider-metal3/api/v1beta1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	"github.com/paritylab/paritylab/lab/controllers"
	"github.com/paritylab/paritylab/lab/crds"
)

// Options tune the controllers; the zero value works.
type Options struct {
	// Concurrency is MaxConcurrentReconciles of each controller. Default
	// 10, as CAPM3.
	Concurrency int
	// RequeueAfter is how soon a Metal3Machine waiting on its host, or a
	// Metal3Remediation waiting on its timeout, is looked at again when no
	// watched object changes. Default 10s.
	RequeueAfter time.Duration
}

func (o *Options) defaults() {
	if o.Concurrency <= 0 {
		o.Concurrency = 10
	}
	if o.RequeueAfter <= 0 {
		o.RequeueAfter = 10 * time.Second
	}
}

// Provider is the CAPM3 component: its CRDs and controllers.
type Provider struct {
	opts Options
}

var _ controllers.Component = (*Provider)(nil)

// New returns the component.
func New(opts Options) *Provider {
	opts.defaults()
	return &Provider{opts: opts}
}

// Name implements controllers.Component.
func (*Provider) Name() string { return "capm3" }

// AddToScheme registers what the controllers read and write: CAPM3's
// API, BareMetalHosts, Cluster API core (v1beta2) and Secrets.
func (*Provider) AddToScheme(s *runtime.Scheme) error {
	return errors.Join(capm3v1beta1.AddToScheme(s), bmov1alpha1.AddToScheme(s),
		clusterv1.AddToScheme(s), corev1.AddToScheme(s))
}

// CRDs implements controllers.Component: CAPM3's, labelled with the
// contract they implement. The BareMetalHost CRD comes with the bare-metal
// operator.
func (*Provider) CRDs() []crds.Set { return []crds.Set{crds.CAPM3StandIn()} }

// Webhooks implements controllers.Component: none (CAPM3's defaulting and
// validation are not part of the lab).
func (*Provider) Webhooks() (*controllers.WebhookConfigurations, error) { return nil, nil }

// WebhooksReady implements controllers.Component: no webhooks.
func (*Provider) WebhooksReady(context.Context, client.Client) error { return nil }

// SetupWithManager registers the Metal3Cluster, Metal3Machine and
// Metal3Remediation controllers.
func (p *Provider) SetupWithManager(ctx context.Context, mgr ctrl.Manager) error {
	copts := controller.Options{MaxConcurrentReconciles: p.opts.Concurrency}
	if err := (&clusterReconciler{client: mgr.GetClient()}).setupWithManager(mgr, copts); err != nil {
		return fmt.Errorf("set up the Metal3Cluster controller: %w", err)
	}
	if err := (&machineReconciler{client: mgr.GetClient(), reader: mgr.GetAPIReader(), requeueAfter: p.opts.RequeueAfter}).setupWithManager(ctx, mgr, copts); err != nil {
		return fmt.Errorf("set up the Metal3Machine controller: %w", err)
	}
	if err := (&remediationReconciler{client: mgr.GetClient(), reader: mgr.GetAPIReader(), requeueAfter: p.opts.RequeueAfter}).setupWithManager(mgr, copts); err != nil {
		return fmt.Errorf("set up the Metal3Remediation controller: %w", err)
	}
	return nil
}
