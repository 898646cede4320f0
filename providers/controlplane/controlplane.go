package controlplane

import (
	"context"
	"fmt"
	"time"

	configv1 "github.com/openshift/api/config/v1"
	hivev1 "github.com/openshift/hive/apis/hive/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	bootstrapv1 "github.com/paritylab/paritylab/providers/bootstrap/api/v1alpha2"
	controlplanev1 "github.com/paritylab/paritylab/providers/controlplane/api/v1alpha3"
	"github.com/paritylab/paritylab/providers/controlplane/internal/controllers/openshiftassistedcontrolplane"
	"github.com/paritylab/paritylab/providers/controlplane/internal/webhooks"
	"github.com/paritylab/paritylab/providers/controlplane/release"
	hiveextv1 "github.com/paritylab/paritylab/providers/thirdparty/hiveextensions/v1beta1"
)

// WorkloadClient returns a client of a Cluster's workload cluster.
type WorkloadClient func(ctx context.Context, cluster *clusterv1.Cluster) (client.Client, error)

// Options tune the provider. The zero value works.
type Options struct {
	// Concurrency is MaxConcurrentReconciles. Default 10.
	Concurrency int
	// WatchFilterValue, when set, limits reconciliation to objects labelled
	// cluster.x-k8s.io/watch-filter with this value.
	WatchFilterValue string
	// Releases reads release images. Default: from their registries.
	Releases release.Resolver
	// Workload reaches installed clusters. Default: through their
	// <cluster>-kubeconfig Secret.
	Workload WorkloadClient
	// RetryAfter is how soon registries and workload clusters are asked
	// again. Default 30s.
	RetryAfter time.Duration
	// SkipWebhooks leaves the webhook out (a manager without a webhook
	// server).
	SkipWebhooks bool
}

// AddToScheme registers every type the provider reads or writes.
func AddToScheme(s *runtime.Scheme) error {
	for _, add := range []func(*runtime.Scheme) error{
		controlplanev1.AddToScheme, bootstrapv1.AddToScheme, clusterv1.AddToScheme, hivev1.AddToScheme,
		hiveextv1.AddToScheme, apiextensionsv1.AddToScheme, configv1.Install,
	} {
		if err := add(s); err != nil {
			return fmt.Errorf("register control-plane provider types: %w", err)
		}
	}
	return nil
}

// SetupWithManager registers the controller and the webhook.
func SetupWithManager(ctx context.Context, mgr ctrl.Manager, opts Options) error {
	if opts.Concurrency == 0 {
		opts.Concurrency = 10
	}
	r := &openshiftassistedcontrolplane.Reconciler{
		Client:           mgr.GetClient(),
		Releases:         opts.Releases,
		WatchFilterValue: opts.WatchFilterValue,
		RetryAfter:       opts.RetryAfter,
	}
	if opts.Workload != nil {
		r.Workload = openshiftassistedcontrolplane.WorkloadClient(opts.Workload)
	}
	if err := r.SetupWithManager(ctx, mgr, controller.Options{MaxConcurrentReconciles: opts.Concurrency}); err != nil {
		return err
	}
	if opts.SkipWebhooks {
		return nil
	}
	return SetupWebhooksWithManager(mgr)
}

// SetupWebhooksWithManager registers the validating webhook only.
func SetupWebhooksWithManager(mgr ctrl.Manager) error {
	if err := (&webhooks.ControlPlane{}).SetupWebhookWithManager(mgr); err != nil {
		return fmt.Errorf("set up OpenshiftAssistedControlPlane webhook: %w", err)
	}
	return nil
}
