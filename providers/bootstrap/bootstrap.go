package bootstrap

import (
	"context"
	"fmt"

	hivev1 "github.com/openshift/hive/apis/hive/v1"
	"k8s.io/apimachinery/pkg/runtime"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/controller"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	bootstrapv1 "github.com/paritylab/paritylab/providers/bootstrap/api/v1alpha2"
	"github.com/paritylab/paritylab/providers/bootstrap/internal/controllers/agent"
	"github.com/paritylab/paritylab/providers/bootstrap/internal/controllers/openshiftassistedconfig"
	"github.com/paritylab/paritylab/providers/bootstrap/internal/discovery"
	"github.com/paritylab/paritylab/providers/bootstrap/internal/webhooks"
	agentv1 "github.com/paritylab/paritylab/providers/thirdparty/agentinstall/v1beta1"
	hiveextv1 "github.com/paritylab/paritylab/providers/thirdparty/hiveextensions/v1beta1"
)

// IgnitionFetcher fetches a discovery ignition from assisted-service.
type IgnitionFetcher interface {
	// Fetch returns the ignition served at url; caBundle, when not empty,
	// is PEM certificates to trust besides the system's.
	Fetch(ctx context.Context, url string, caBundle []byte) ([]byte, error)
}

// Options tune the provider. The zero value works.
type Options struct {
	// Concurrency is MaxConcurrentReconciles of each controller. Default 10.
	Concurrency int
	// WatchFilterValue, when set, limits reconciliation to objects labelled
	// cluster.x-k8s.io/watch-filter with this value.
	WatchFilterValue string
	// Ignition fetches discovery ignitions. Default: over HTTP(S).
	Ignition IgnitionFetcher
	// SkipWebhooks leaves the webhooks out (a manager without a webhook
	// server).
	SkipWebhooks bool
	// SkipAgentController leaves the Agent controller out: nothing of
	// the provider approves the Agents of its Machines' hosts, so another
	// party must (a user by hand), or the install waits for them.
	SkipAgentController bool
}

// AddToScheme registers every type the provider reads or writes.
func AddToScheme(s *runtime.Scheme) error {
	for _, add := range []func(*runtime.Scheme) error{
		bootstrapv1.AddToScheme, clusterv1.AddToScheme, agentv1.AddToScheme,
		hiveextv1.AddToScheme, hivev1.AddToScheme,
	} {
		if err := add(s); err != nil {
			return fmt.Errorf("register bootstrap provider types: %w", err)
		}
	}
	return nil
}

// SetupWithManager registers the controllers and webhooks.
func SetupWithManager(ctx context.Context, mgr ctrl.Manager, opts Options) error {
	if opts.Concurrency == 0 {
		opts.Concurrency = 10
	}
	var fetcher discovery.Fetcher = &discovery.HTTP{}
	if opts.Ignition != nil {
		fetcher = opts.Ignition
	}
	copts := controller.Options{MaxConcurrentReconciles: opts.Concurrency}
	config := &openshiftassistedconfig.Reconciler{Client: mgr.GetClient(), Ignition: fetcher, WatchFilterValue: opts.WatchFilterValue}
	if err := config.SetupWithManager(ctx, mgr, copts); err != nil {
		return err
	}
	if !opts.SkipAgentController {
		if err := (&agent.Reconciler{Client: mgr.GetClient()}).SetupWithManager(ctx, mgr, copts); err != nil {
			return err
		}
	}
	if opts.SkipWebhooks {
		return nil
	}
	return SetupWebhooksWithManager(mgr)
}

// SetupWebhooksWithManager registers the validating webhooks only.
func SetupWebhooksWithManager(mgr ctrl.Manager) error {
	if err := (&webhooks.Config{}).SetupWebhookWithManager(mgr); err != nil {
		return fmt.Errorf("set up OpenshiftAssistedConfig webhook: %w", err)
	}
	if err := (&webhooks.ConfigTemplate{}).SetupWebhookWithManager(mgr); err != nil {
		return fmt.Errorf("set up OpenshiftAssistedConfigTemplate webhook: %w", err)
	}
	return nil
}
