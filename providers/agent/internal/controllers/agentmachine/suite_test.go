package agentmachine_test

import (
	"os"
	"testing"

	"github.com/paritylab/paritylab/providers/internal/testenv"
)

// env is the API server and manager every test shares. It runs no
// controller of its own: each test adds its own AgentMachine controller to
// the running manager (see fixture.startController), filtered to the
// test's namespace, so that parallel tests never pick each other's Agents.
var env *testenv.Environment

func TestMain(m *testing.M) { os.Exit(testenv.Run(m, testenv.Options{}, &env)) }
