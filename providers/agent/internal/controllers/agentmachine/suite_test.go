package agentmachine_test

import (
	"fmt"
	"os"
	"testing"

	"github.com/paritylab/paritylab/providers/internal/testenv"
)

// env is the API server and manager every test shares. It runs no
// controller of its own: each test adds its own AgentMachine controller to
// the running manager (see fixture.startController), filtered to the
// test's namespace, so that parallel tests never pick each other's Agents.
var env *testenv.Environment

func TestMain(m *testing.M) {
	var err error
	env, err = testenv.Start(testenv.Options{})
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
