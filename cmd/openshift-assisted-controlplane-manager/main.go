// Command openshift-assisted-controlplane-manager runs the OpenShift
// assisted control-plane provider (OpenshiftAssistedControlPlane and its
// webhook) as clusterctl deploys it from
// providers/controlplane/components.yaml.
package main

import (
	"context"

	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/paritylab/paritylab/cmd/internal/manager"
	"github.com/paritylab/paritylab/providers/controlplane"
)

func main() {
	manager.Main(manager.Provider{
		Name:        "openshift-assisted-controlplane",
		AddToScheme: controlplane.AddToScheme,
		Setup: func(ctx context.Context, mgr ctrl.Manager, f manager.Flags) error {
			return controlplane.SetupWithManager(ctx, mgr, controlplane.Options{Concurrency: f.Concurrency, WatchFilterValue: f.WatchFilter})
		},
	})
}
