// Command capi-agent-manager runs the agent infrastructure provider
// (AgentCluster, AgentMachine, AgentMachineTemplate: their controllers,
// the NodeProviderID controller and the validating webhooks) as clusterctl
// deploys it from providers/agent/components.yaml.
//
// Besides the flags every provider manager takes it has upstream's
// --agent-namespace; --namespace, also upstream's, is among the common
// ones and restricts the manager's cache as upstream's does.
package main

import (
	"context"
	"flag"

	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/paritylab/paritylab/cmd/internal/manager"
	"github.com/paritylab/paritylab/providers/agent"
)

func main() {
	var agentNamespace string
	flag.StringVar(&agentNamespace, "agent-namespace", "", "namespace whose Agents are listed and watched; empty watches all")
	manager.Main(manager.Provider{
		Name:        "capi-agent",
		AddToScheme: agent.AddToScheme,
		Setup: func(ctx context.Context, mgr ctrl.Manager, f manager.Flags) error {
			return agent.SetupWithManager(ctx, mgr, agent.Options{
				Concurrency: f.Concurrency, AgentNamespace: agentNamespace, WatchFilterValue: f.WatchFilter,
			})
		},
	})
}
