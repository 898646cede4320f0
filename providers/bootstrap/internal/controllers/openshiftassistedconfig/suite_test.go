package openshiftassistedconfig_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/controller"

	"github.com/paritylab/paritylab/providers/bootstrap"
	"github.com/paritylab/paritylab/providers/bootstrap/internal/controllers/openshiftassistedconfig"
	"github.com/paritylab/paritylab/providers/bootstrap/internal/discovery"
	"github.com/paritylab/paritylab/providers/internal/testenv"
)

var (
	env *testenv.Environment
	// ignitionServer plays assisted-service's discovery ignition endpoint:
	// /ignition/<name> serves an ignition naming <name>, /broken answers
	// 500.
	ignitionServer *httptest.Server
)

func TestMain(m *testing.M) {
	ignitionServer = httptest.NewServer(http.HandlerFunc(serveIgnition))
	var err error
	env, err = testenv.Start(testenv.Options{Setup: func(ctx context.Context, mgr ctrl.Manager) error {
		r := &openshiftassistedconfig.Reconciler{Client: mgr.GetClient(), Ignition: &discovery.HTTP{}, RetryAfter: time.Second}
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
	ignitionServer.Close()
	os.Exit(code)
}

func serveIgnition(w http.ResponseWriter, r *http.Request) {
	name, ok := strings.CutPrefix(r.URL.Path, "/ignition/")
	if !ok {
		http.Error(w, "assisted-service is unhappy", http.StatusInternalServerError)
		return
	}
	fmt.Fprintf(w, `{"ignition":{"version":"3.1.0"},"storage":{"files":[{"path":"/etc/assisted/infraenv","contents":{"source":"data:,%s"}}]}}`, name)
}

func ignitionURL(name string) string { return ignitionServer.URL + "/ignition/" + name }
