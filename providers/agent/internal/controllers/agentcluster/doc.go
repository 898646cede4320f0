// Package agentcluster reconciles AgentClusters, the infrastructure
// clusters of the agent provider. For each it finds or creates the hive
// ClusterDeployment that stands, towards assisted-service, for the already
// installed (typically hosted) cluster the Machines join, filled in from
// the Cluster's control plane object (a HyperShift HostedControlPlane),
// and the AgentClusterInstall that tells assisted-service where the hosts
// fetch their Ignition; it reports the AgentCluster ready once its control
// plane endpoint is set.
//
// The rules are those of openshift/cluster-api-provider-agent at 79696ce
// (controllers/agentcluster_controller.go, cited as "upstream L<n>", and
// controllers/ignition_endpoint.go), plan rule 15 in
// docs/plans/hypershift.md §1. A paused AgentCluster (the
// cluster.x-k8s.io/paused annotation) orphans its ClusterDeployment; a
// deleted one lets go at once, its ClusterDeployment deleted by the
// garbage collector unless it was orphaned.
//
// Departures from upstream, each said where the code is:
//   - WatchFilterValue (Cluster API's watch filter) is ours.
//   - A failed patch of the AgentCluster is returned, so retried; upstream
//     logs it.
//   - The status names the ClusterDeployment only once it was created;
//     upstream records it before creating, and a failed create then
//     leaves a reference to nothing.
//   - The control plane is read at v1beta2 when its kind is not served at
//     v1beta1 too, not only when v1beta1 answers Not Found.
//
// It must not import anything of the lab.
package agentcluster
