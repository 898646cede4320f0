package nodeproviderid_test

import (
	"context"
	"os"
	"sync"
	"testing"

	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/paritylab/paritylab/providers/agent"
	"github.com/paritylab/paritylab/providers/internal/testenv"
)

// env is the API server and manager every test shares, and it is the hosted
// cluster too: the tests' Nodes live there, reached through the kubeconfig
// each test writes into its namespace's admin-kubeconfig Secret. It runs no
// controller of its own, only the provider's webhooks: each test adds its
// own to the running manager (see fixture.startController), filtered to the
// test's namespace.
var env *testenv.Environment

func TestMain(m *testing.M) { os.Exit(testenv.Run(m, testenv.Options{Setup: webhooks}, &env)) }

// kubeconfig reaches env as an administrator.
var kubeconfig = sync.OnceValues(func() ([]byte, error) { return env.Kubeconfig() })

// webhooks serves the provider's validating webhooks, which the API server
// calls for every object of the provider the tests write.
func webhooks(_ context.Context, mgr ctrl.Manager) error { return agent.SetupWebhooksWithManager(mgr) }
