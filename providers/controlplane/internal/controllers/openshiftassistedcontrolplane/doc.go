// Package openshiftassistedcontrolplane reconciles
// OpenshiftAssistedControlPlanes: it asks assisted-service to install the
// cluster (ClusterDeployment, AgentClusterInstall and a ClusterImageSet
// whose release image is resolved to a digest), keeps the install's worker
// count in step with the cluster's MachineDeployments, creates and deletes
// control-plane Machines (one per reconcile, the delete annotation first,
// never below a safe etcd member count, replacing Machines a
// MachineHealthCheck flags), publishes the admin kubeconfig as
// <cluster>-kubeconfig, reads the Kubernetes version from the release
// image and upgrades the installed cluster in place through its
// ClusterVersion. Status follows the Cluster API v1beta2 control-plane
// contract.
//
// It must not import anything of the lab.
package openshiftassistedcontrolplane
