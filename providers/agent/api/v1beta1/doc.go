// Package v1beta1 is paritylab's own Go mirror of the API of the Cluster API
// agent infrastructure provider (openshift/cluster-api-provider-agent),
// served under capi-provider.agent-install.openshift.io/v1beta1: the
// AgentCluster, AgentMachine and AgentMachineTemplate kinds.
//
// The upstream API module cannot be imported. The only version the Go proxy
// serves imports sigs.k8s.io/cluster-api/api/v1beta1, a package Cluster API
// v1.13 no longer has, and the proxy refuses the newer versions that were
// moved to the v1beta2 core types. These types are written here instead and
// follow upstream's main branch: conditions are metav1.Conditions, and the
// control plane endpoint, machine addresses and failure domains are Cluster
// API v1beta2 core types, whose JSON is the same as before. The API group,
// version, kinds, resource names, JSON field names and string values are
// upstream's, so manifests written for the real provider (HyperShift's
// NodePool controller writes AgentMachineTemplates) decode into them, and
// objects built with them are understood by the real provider.
//
// The kinds implement the Cluster API v1beta1 infrastructure contract
// (status.ready, failureReason and failureMessage, no status.initialization),
// as upstream does. Their CRDs carry the contract label
// cluster.x-k8s.io/v1beta1=v1beta1, as HyperShift labels them when it
// installs them.
//
// One departure: upstream also serves v1alpha1 (deprecated, converted
// through its webhook); this API serves v1beta1 only.
//
// The string constants controllers compare against are in conditions.go
// (condition types and reasons) and constants.go (finalizers, and the labels
// and annotations the provider puts on Agents and ClusterDeployments).
//
// It must not import controller code, nor anything of paritylab.
package v1beta1
