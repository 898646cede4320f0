package webhooks_test

import (
	"context"
	"fmt"
	"os"
	"testing"

	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/paritylab/paritylab/providers/controlplane"
	"github.com/paritylab/paritylab/providers/internal/testenv"
)

var env *testenv.Environment

func TestMain(m *testing.M) {
	var err error
	env, err = testenv.Start(testenv.Options{Setup: func(_ context.Context, mgr ctrl.Manager) error {
		return controlplane.SetupWebhooksWithManager(mgr)
	}})
	if err != nil {
		fmt.Fprintln(os.Stderr, "start test environment:", err)
		os.Exit(1)
	}
	code := m.Run()
	if err := env.Stop(); err != nil {
		fmt.Fprintln(os.Stderr, "stop test environment:", err)
	}
	os.Exit(code)
}
