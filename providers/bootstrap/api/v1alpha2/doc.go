// Package v1alpha2 is the API of the OpenShift assisted bootstrap provider,
// served under bootstrap.cluster.x-k8s.io/v1alpha2: OpenshiftAssistedConfig,
// one per Machine, and OpenshiftAssistedConfigTemplate, from which
// MachineDeployments and the control plane stamp configs.
//
// The kinds implement the Cluster API v1beta2 bootstrap contract
// (status.initialization.dataSecretCreated, status.dataSecretName,
// conditions); their CRDs carry the contract label
// cluster.x-k8s.io/v1beta2=v1alpha2. The API version is the one the public
// cluster-api-provider-openshift-assisted project serves for the same
// contract, so manifests written for it apply here.
//
// It must not import controller code, nor anything of paritylab outside
// providers/.
package v1alpha2
