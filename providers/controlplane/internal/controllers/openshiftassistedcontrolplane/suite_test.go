package openshiftassistedcontrolplane_test

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/paritylab/paritylab/providers/bootstrap"
	"github.com/paritylab/paritylab/providers/controlplane"
	"github.com/paritylab/paritylab/providers/controlplane/internal/controllers/openshiftassistedcontrolplane"
	"github.com/paritylab/paritylab/providers/controlplane/release"
	"github.com/paritylab/paritylab/providers/controlplane/release/releasetest"
	"github.com/paritylab/paritylab/providers/internal/testenv"
)

// The tests call the control plane's Reconcile directly, one step at a
// time, against a real API server (with the providers' webhooks); the
// manager runs the bootstrap provider, so the configs the control plane
// creates are reconciled as in a real hub. The API server doubles as the
// workload cluster: it serves ClusterVersion.
var (
	env *testenv.Environment
	// registry serves the releases the tests install and upgrade to.
	registry *releasetest.Registry
	// digests are the pushed releases by OpenShift version.
	digests = map[string]string{}
)

// Releases in the registry: OpenShift version -> Kubernetes version.
var releases = map[string]string{"4.17.3": "1.30.5", "4.17.4": "1.30.6", "4.18.1": "1.31.2"}

const releaseRepository = "ocp/release"

func TestMain(m *testing.M) {
	registry = releasetest.Start()
	for v, k := range releases {
		d, err := registry.Push(releaseRepository, v, k)
		if err != nil {
			fmt.Fprintln(os.Stderr, "push release:", err)
			os.Exit(1)
		}
		digests[v] = d
	}
	var err error
	env, err = testenv.Start(testenv.Options{ClusterVersion: true, Setup: func(ctx context.Context, mgr ctrl.Manager) error {
		if err := bootstrap.SetupWithManager(ctx, mgr, bootstrap.Options{Concurrency: 2}); err != nil {
			return err
		}
		return controlplane.SetupWebhooksWithManager(mgr)
	}})
	if err != nil {
		fmt.Fprintln(os.Stderr, "start test environment:", err)
		os.Exit(1)
	}
	testenv.RaiseParallelism(16)
	code := m.Run()
	if err := env.Stop(); err != nil {
		fmt.Fprintln(os.Stderr, "stop test environment:", err)
	}
	registry.Close()
	os.Exit(code)
}

// newReconciler is the control-plane reconciler under test, reading
// through an uncached client so every step sees the previous one.
func newReconciler() *openshiftassistedcontrolplane.Reconciler {
	return &openshiftassistedcontrolplane.Reconciler{
		Client:     env.Client,
		Releases:   &release.Remote{Timeout: 5 * time.Second},
		Workload:   openshiftassistedcontrolplane.KubeconfigClient(env.Client),
		RetryAfter: time.Second,
	}
}
