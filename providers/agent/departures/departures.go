package departures

// Repository is upstream's repository, which UpstreamRef paths are in, at
// the commit the provider follows.
const (
	Repository = "openshift/cluster-api-provider-agent"
	Commit     = "79696ce"
)

// Departure is one behaviour where our provider and upstream differ.
type Departure struct {
	// ID is a short stable name, shown in reports.
	ID string
	// Upstream says what upstream does; UpstreamRef where (path in
	// Repository, then the function or type).
	Upstream, UpstreamRef string
	// Ours says what ours does; OursRef where (path in this repository,
	// then the function, type or method, Type.Method).
	Ours, OursRef string
	// ShowsIn says where a parity run sees it.
	ShowsIn string
}

// Departures are all the registered departures, in report order.
var Departures = []Departure{
	{
		ID:          "agent-webhooks",
		Upstream:    "serves no webhook for v1beta1: any agentLabelSelector, template change or Ignition URL is accepted, and the controllers trip over a bad one later",
		UpstreamRef: "main.go main",
		Ours:        "validating webhooks refuse an invalid agentLabelSelector, any change of an AgentMachineTemplate's spec, and an ignitionEndpoint.url that is not an absolute http(s) URL",
		OursRef:     "providers/agent/agent.go SetupWebhooksWithManager",
		ShowsIn:     "a create or update of such an object, refused here and accepted upstream",
	},
	{
		ID:          "agent-v1beta1-only",
		Upstream:    "also serves the deprecated v1alpha1, declared the conversion hub",
		UpstreamRef: "api/v1alpha1/conversion.go AgentMachine.Hub",
		Ours:        "serves v1beta1 only",
		OursRef:     "providers/agent/api/v1beta1/groupversion_info.go GroupVersion",
		ShowsIn:     "a v1alpha1 object, which the API server refuses (HyperShift writes v1beta1 only)",
	},
	{
		ID:          "agent-watch-filter",
		Upstream:    "has no watch filter",
		UpstreamRef: "main.go main",
		Ours:        "honours Cluster API's cluster.x-k8s.io/watch-filter label when --watch-filter is set",
		OursRef:     "providers/agent/agent.go Options",
		ShowsIn:     "nothing unless the flag is set",
	},
	{
		ID:          "agent-unpause-watch",
		Upstream:    "watches AgentMachines, Machines and Agents only, so an AgentMachine waits for one of those to change after its Cluster is unpaused",
		UpstreamRef: "controllers/agentmachine_controller.go AgentMachineReconciler.SetupWithManager",
		Ours:        "also watches Clusters and reconciles the AgentMachines of one that is unpaused",
		OursRef:     "providers/agent/internal/controllers/agentmachine/watches.go Reconciler.clusterToAgentMachines",
		ShowsIn:     "durations after a Cluster is unpaused (clusterctl move)",
	},
	{
		ID:          "agent-addresses",
		Upstream:    "panics on an interface address without a prefix length, and adds an empty InternalDNS when the Agent has no host name, which the CRD then refuses",
		UpstreamRef: "controllers/agentmachine_controller.go getAddresses",
		Ours:        "takes an address without a prefix whole and leaves out an empty InternalDNS",
		OursRef:     "providers/agent/internal/controllers/agentmachine/agentmachine_controller_status.go addresses",
		ShowsIn:     "only Agents whose inventory lacks a prefix or a host name, which assisted-service does not write",
	},
	{
		ID:          "agentcluster-patch-error",
		Upstream:    "only logs a failed patch of the AgentCluster",
		UpstreamRef: "controllers/agentcluster_controller.go AgentClusterReconciler.Reconcile",
		Ours:        "returns it, so the reconcile is retried",
		OursRef:     "providers/agent/internal/controllers/agentcluster/agentcluster_controller.go Reconciler.Reconcile",
		ShowsIn:     "API server errors only",
	},
	{
		ID:          "agentcluster-cd-ref",
		Upstream:    "records the ClusterDeployment in the status before creating it, so a failed create leaves a reference to nothing",
		UpstreamRef: "controllers/agentcluster_controller.go AgentClusterReconciler.createClusterDeployment",
		Ours:        "records it only once the ClusterDeployment exists",
		OursRef:     "providers/agent/internal/controllers/agentcluster/agentcluster_controller_phases.go Reconciler.findOrCreateClusterDeployment",
		ShowsIn:     "a refused ClusterDeployment create",
	},
	{
		ID:          "agentcluster-controlplane-version",
		Upstream:    "reads the control plane at v1beta2 only when v1beta1 answers Not Found",
		UpstreamRef: "controllers/agentcluster_controller.go AgentClusterReconciler.getControlPlane",
		Ours:        "also reads it at v1beta2 when its kind is not served at v1beta1",
		OursRef:     "providers/agent/internal/controllers/agentcluster/controlplane.go Reconciler.readControlPlane",
		ShowsIn:     "a control plane kind served at v1beta2 only (not HyperShift's)",
	},
	{
		ID:          "nodeproviderid-no-provider-id",
		Upstream:    "dereferences a ready AgentMachine's provider ID unchecked",
		UpstreamRef: "controllers/node_provider_id_controller.go NodeProviderIDReconciler.setNodeProviderID",
		Ours:        "returns an error for a ready AgentMachine without a provider ID",
		OursRef:     "providers/agent/internal/controllers/nodeproviderid/nodeproviderid_controller.go Reconciler.setProviderID",
		ShowsIn:     "nothing: the AgentMachine controller sets the provider ID before ready",
	},
}

// IDs are the IDs of every departure, in report order.
func IDs() []string {
	out := make([]string, 0, len(Departures))
	for _, d := range Departures {
		out = append(out, d.ID)
	}
	return out
}
