package agent_test

import (
	"context"
	"fmt"
	"os"
	"testing"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/controller"

	"github.com/paritylab/paritylab/providers/bootstrap"
	"github.com/paritylab/paritylab/providers/bootstrap/internal/controllers/agent"
	"github.com/paritylab/paritylab/providers/internal/testenv"
)

var env *testenv.Environment

func TestMain(m *testing.M) {
	var err error
	env, err = testenv.Start(testenv.Options{Setup: func(ctx context.Context, mgr ctrl.Manager) error {
		r := &agent.Reconciler{Client: mgr.GetClient()}
		if err := r.SetupWithManager(ctx, mgr, controller.Options{MaxConcurrentReconciles: 4}); err != nil {
			return err
		}
		return bootstrap.SetupWebhooksWithManager(mgr)
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
	os.Exit(code)
}
