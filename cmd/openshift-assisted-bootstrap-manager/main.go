// Command openshift-assisted-bootstrap-manager runs the OpenShift assisted
// bootstrap provider (OpenshiftAssistedConfig, its Agent controller and
// webhooks) as clusterctl deploys it from providers/bootstrap/components.yaml.
package main

import (
	"context"

	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/paritylab/paritylab/cmd/internal/manager"
	"github.com/paritylab/paritylab/providers/bootstrap"
)

func main() {
	manager.Main(manager.Provider{
		Name:        "openshift-assisted-bootstrap",
		AddToScheme: bootstrap.AddToScheme,
		Setup: func(ctx context.Context, mgr ctrl.Manager, f manager.Flags) error {
			return bootstrap.SetupWithManager(ctx, mgr, bootstrap.Options{Concurrency: f.Concurrency, WatchFilterValue: f.WatchFilter})
		},
	})
}
