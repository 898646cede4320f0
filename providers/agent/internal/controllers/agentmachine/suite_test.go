package agentmachine_test

import (
	"os"
	"testing"

	capiagentv1 "github.com/paritylab/paritylab/providers/agent/api/v1beta1"
	"github.com/paritylab/paritylab/providers/internal/testenv"
)

// env is the API server and manager every test shares. It runs no
// controller of its own: each test adds its own AgentMachine controller to
// the running manager (see fixture.startController), filtered to the
// test's namespace, so that parallel tests never pick each other's Agents.
//
// The API server calls none of the provider's webhooks, so that a test can
// write what they refuse (an agentLabelSelector that does not parse) and
// see what the controller does with an object written before them.
var env *testenv.Environment

func TestMain(m *testing.M) {
	os.Exit(testenv.Run(m, testenv.Options{WithoutWebhooksFor: []string{capiagentv1.GroupVersion.Group}}, &env))
}
