package agent_test

import (
	"context"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	crconfig "sigs.k8s.io/controller-runtime/pkg/config"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/paritylab/paritylab/providers/agent"
)

// The zero Options set up every controller and webhook; SkipWebhooks
// leaves the webhooks out. Nothing here reaches an API server: a manager
// that never starts asks none. (AgentNamespace builds a second cache,
// which asks the API server at once; the agentmachine tests cover it.)
func TestSetupWithManager(t *testing.T) {
	for name, opts := range map[string]agent.Options{
		"zero":        {},
		"no webhooks": {SkipWebhooks: true, Concurrency: 2, WatchFilterValue: "lab"},
	} {
		t.Run(name, func(t *testing.T) {
			s := runtime.NewScheme()
			if err := clientgoscheme.AddToScheme(s); err != nil {
				t.Fatal(err)
			}
			if err := agent.AddToScheme(s); err != nil {
				t.Fatal(err)
			}
			mgr, err := ctrl.NewManager(&rest.Config{Host: "https://127.0.0.1:1"}, ctrl.Options{
				Scheme: s, Metrics: metricsserver.Options{BindAddress: "0"},
				// Both cases name their controllers alike.
				Controller: crconfig.Controller{SkipNameValidation: ptr.To(true)},
			})
			if err != nil {
				t.Fatal(err)
			}
			if err := agent.SetupWithManager(context.Background(), mgr, opts); err != nil {
				t.Fatalf("SetupWithManager(%+v): %v", opts, err)
			}
			served := mgr.GetWebhookServer().WebhookMux() != nil
			if want := !opts.SkipWebhooks; served != want {
				t.Errorf("webhooks registered: %t, want %t", served, want)
			}
		})
	}
}
