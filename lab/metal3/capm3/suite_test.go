package capm3

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	bmov1alpha1 "github.com/metal3-io/baremetal-operator/apis/metal3.io/v1alpha1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	"github.com/paritylab/paritylab/lab/controllers"
	"github.com/paritylab/paritylab/lab/controlplane"
	"github.com/paritylab/paritylab/lab/crds"
)

// suite is one real API server (etcd + kube-apiserver) serving the
// Cluster API, metal3 and CAPM3 CRDs, with this package's controllers in
// a manager. No bare-metal operator or CAPI core runs: each test plays
// them, writing BareMetalHost status and Machines as they would, so it
// sees exactly what the CAPM3 controllers do.
var suite struct {
	client client.Client
}

// TestMain starts the API server and the controllers. CAPM3_TEST_LOG=1
// shows the controllers' log.
func TestMain(m *testing.M) {
	ctrllog.SetLogger(logr.New(ctrllog.NullLogSink{}))
	os.Exit(runSuite(m))
}

func runSuite(m *testing.M) int {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	dir, err := os.MkdirTemp("", "paritylab-capm3-test-")
	if err != nil {
		return fail(err)
	}
	defer os.RemoveAll(dir)
	cp, err := controlplane.Start(ctx, controlplane.Options{Name: "capm3", Dir: filepath.Join(dir, "cp")})
	if err != nil {
		return fail(err)
	}
	defer cp.Stop()
	host, err := controllers.Start(ctx, controllers.Options{
		RESTConfig: cp.RESTConfig(), WebhookHost: "127.0.0.1", CertDir: filepath.Join(dir, "certs"),
		Components: []controllers.Component{
			New(Options{RequeueAfter: 200 * time.Millisecond}),
			&controllers.CRDsOnly{
				ComponentName: "capi-and-metal3-apis",
				Sets:          []crds.Set{crds.ClusterAPI(), crds.Metal3()},
				Schemes:       []func(*runtime.Scheme) error{clusterv1.AddToScheme, bmov1alpha1.AddToScheme},
			},
		},
		Logger: testLogger(),
	})
	if err != nil {
		return fail(err)
	}
	defer host.Stop(context.Background())
	if suite.client, err = client.New(cp.RESTConfig(), client.Options{Scheme: host.Manager().GetScheme()}); err != nil {
		return fail(err)
	}
	return m.Run()
}

func fail(err error) int {
	fmt.Fprintln(os.Stderr, "capm3 test suite:", err)
	return 1
}

func testLogger() logr.Logger {
	if os.Getenv("CAPM3_TEST_LOG") == "" {
		return logr.Discard()
	}
	return funcr.New(func(prefix, args string) { fmt.Fprintln(os.Stderr, prefix, args) }, funcr.Options{Verbosity: 1})
}
