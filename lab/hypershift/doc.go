// Package hypershift is the lab's stand-in for the HyperShift operator on
// the agent platform: what it writes for a HostedCluster and its NodePools
// on the management cluster, to the names, labels, annotations and fields
// of openshift/hypershift@3ee9615 (docs/plans/hypershift-facts cites them).
// Its ignitionserver subpackage is the hosted cluster's ignition server.
//
// Operator is a controllers.Component whose HostedCluster controller
// does what HyperShift's does on the agent platform, and, for the status
// the rest reads, what its control-plane operator does: the control-plane
// namespace <namespace>-<name> with the pull secret and the admin
// kubeconfigs, a hosted control plane (a lab workload cluster, recorded in
// the lab's ledger), the HostedControlPlane (platform None, ready), an
// ignition server, the AgentCluster, the v1beta1 CAPI Cluster, the agent
// provider's Role and RoleBinding, and one agent provider manager per
// hosted cluster, restricted to its control-plane namespace as
// HyperShift's capi-provider Deployment is.
//
// Departures: one hosted API server process set stands for HyperShift's
// control-plane pods; its conditions are True while it runs, not computed
// from Deployments; the ignition endpoint is the server's host:port where
// upstream publishes a Service; the endpoints and kubeconfigs name the
// host's loopback, as the hub names the lab's other services, which the
// hub's processes reach directly and guests at their gateway (the lab
// agent dials 127.0.0.1 there); upstream messages the facts do
// not record are the lab's own wording. Deletion removes the NodePools
// and the CAPI Cluster first and waits for them, then the agent RBAC, the
// processes and the namespace.
//
// Its NodePool controller (upgrade type Replace) writes a NodePool's
// objects (nodepool_objects.go: the token and user-data Secrets, the
// AgentMachineTemplate named by the hash of its spec, the v1beta1
// MachineDeployment), its status from the MachineDeployment and Machines,
// and the NodePool label on their Nodes in the hosted cluster; deleting a
// NodePool waits for its Machines, whose AgentMachines unbind their
// Agents. A machine approver per hosted cluster approves the node
// bootstrapper's client CSRs by cluster-machine-approver's rules.
// Departures: InPlace NodePools are refused (upstream runs them with a
// MachineSet); outdated tokens are not rotated or expired; no
// MachineHealthCheck (autoRepair), autoscaling, node labels or taints on
// Machines; serving CSRs are left to the lab's nodes, which ask for none.
//
// Private CAPI types (openshift/enhancements PR 1927, provisional): the
// operator installs Cluster API's CRDs in cluster.hypershift.openshift.io
// (PrivateClusterAPI), converted by a shim in front of CAPI's conversion
// webhook (apiproxy.ConversionShim at PrivateConversionPath). A
// HostedCluster annotated PrivateCAPITypesAnnotation "true" has its CAPI
// Cluster and MachineDeployments written through the operator's API
// proxy, and runs its own Cluster API core (StartPrivateCAPI: upstream's
// reconcilers, namespace-scoped, without webhooks), agent provider and
// machine approver through the cluster's proxy; any other HostedCluster's
// cluster.x-k8s.io objects are the platform CAPI's, as today. Departures:
// the proxies are in-process listeners carrying the lab's credentials,
// one per hosted cluster where the enhancement has a sidecar per pod; the
// proxies' clients are configured for JSON (apiproxy.Server.RESTConfig);
// the lab stores v1beta2 where the enhancement keeps v1beta1; no CAPI
// webhook validates or defaults private objects.
//
// Migration (migration.go): annotating a running HostedCluster
// MigrateCAPITypesAnnotation "private" runs the enhancement's steps, one
// cluster at a time: lock (migration-in-progress; the HostedCluster and
// NodePool controllers wait), pause the standard Cluster, stop the
// cluster's CAPI components, copy Cluster, MachineDeployments,
// MachineSets and Machines into the private group (names, spec, labels,
// annotations, finalizers, status; owner references to the copies),
// point the owner references of AgentMachines, AgentClusters,
// AgentMachineTemplates, Secrets and ConfigMaps at the copies before
// anything is deleted, start the components on private types, unpause,
// pass the health checks for 30 s within 5 min, annotate
// private-capi-types, delete the standard objects (finalizers stripped,
// their Cluster still paused) and unlock. A failing step rolls back:
// the components stop, the owner references are restored, the copies
// go, the standard Cluster is unpaused, its components start again,
// and the cluster is annotated migration-failed (not tried again until
// that is removed) with a Warning event. Departures: the run is not
// resumable after an operator restart (its state is in memory); no
// component "replicas" are stored, as they run in process; the alert is
// an event, as the lab has no Prometheus.
//
// It must not import anything above lab.
package hypershift
