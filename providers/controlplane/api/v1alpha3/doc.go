// Package v1alpha3 is the API of the OpenShift assisted control-plane
// provider, served under controlplane.cluster.x-k8s.io/v1alpha3:
// OpenshiftAssistedControlPlane, which installs an OpenShift cluster on
// bare metal through assisted-service (ClusterDeployment,
// AgentClusterInstall, ClusterImageSet) and manages its control-plane
// Machines.
//
// The kind implements the Cluster API v1beta2 control-plane contract
// (replicas and the /scale subresource, machineTemplate,
// status.initialization.controlPlaneInitialized, status.version, the
// <cluster>-kubeconfig Secret); its CRD carries the contract label
// cluster.x-k8s.io/v1beta2=v1alpha3. The API version is the one the public
// cluster-api-provider-openshift-assisted project serves for the same
// contract.
//
// It must not import controller code, nor anything of paritylab outside
// providers/.
package v1alpha3
