package nodeproviderid_test

import (
	"os"
	"sync"
	"testing"

	"github.com/paritylab/paritylab/providers/internal/testenv"
)

// env is the API server and manager every test shares, and it is the
// hosted cluster too: the tests' Nodes live there, reached through the
// kubeconfig each test writes into its namespace's admin-kubeconfig
// Secret. It runs no controller of its own: each test adds its own to the
// running manager (see fixture.startController), filtered to the test's
// namespace.
var env *testenv.Environment

func TestMain(m *testing.M) { os.Exit(testenv.Run(m, testenv.Options{}, &env)) }

// kubeconfig reaches env as an administrator.
var kubeconfig = sync.OnceValues(func() ([]byte, error) { return env.Kubeconfig() })
