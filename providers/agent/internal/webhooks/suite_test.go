package webhooks_test

import (
	"context"
	"os"
	"testing"

	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/paritylab/paritylab/providers/agent"
	"github.com/paritylab/paritylab/providers/internal/testenv"
)

// env is the API server, with every provider's webhook configurations
// installed, and a manager serving the agent provider's webhooks.
var env *testenv.Environment

func TestMain(m *testing.M) {
	os.Exit(testenv.Run(m, testenv.Options{Setup: func(_ context.Context, mgr ctrl.Manager) error {
		return agent.SetupWebhooksWithManager(mgr)
	}}, &env))
}
