// Package agent is the entry point of the agent infrastructure provider,
// paritylab's counterpart of openshift/cluster-api-provider-agent: it
// registers the provider's types, its controllers (AgentMachine,
// AgentCluster, NodeProviderID) and its validating webhooks with a
// controller-runtime manager. The manager binary (cmd/capi-agent-manager)
// calls it, and so can any in-process manager, so both run the same code.
//
// Where the provider departs from upstream is listed in
// providers/agent/departures.
//
// It must not import anything of the lab.
package agent
