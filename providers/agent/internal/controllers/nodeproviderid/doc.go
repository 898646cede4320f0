// Package nodeproviderid gives each Node of a hosted cluster the provider
// ID of the AgentMachine behind it, once that AgentMachine is ready: the
// Node is the one named by the AgentMachine's InternalDNS address, and
// Cluster API matches Machines to Nodes by that ID.
//
// The hosted cluster is reached through RemoteClients; the default reads
// the Secret admin-kubeconfig (key kubeconfig) of the AgentMachine's
// namespace, which HyperShift writes into each control plane namespace.
//
// The rules are those of openshift/cluster-api-provider-agent at 79696ce
// (controllers/node_provider_id_controller.go, cited as "upstream L<n>",
// and controllers/remote_client.go), plan rule 16 in
// docs/plans/hypershift.md §1. Departures: WatchFilterValue is ours, and a
// ready AgentMachine without a provider ID is an error rather than a
// crash.
//
// It must not import anything of the lab.
package nodeproviderid
