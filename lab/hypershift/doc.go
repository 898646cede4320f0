// Package hypershift is the lab's stand-in for the HyperShift operator on
// the agent platform: what it writes for a HostedCluster and its NodePools
// on the management cluster, to the names, labels, annotations and fields
// of openshift/hypershift@3ee9615 (docs/plans/hypershift-facts cites them).
// Its ignitionserver subpackage is the hosted cluster's ignition server.
//
// So far it holds the NodePool's CAPI objects (nodepool_objects.go): the
// AgentMachineTemplate, the MachineDeployment, and the token and user-data
// Secrets. The HostedCluster and NodePool controllers come next
// (docs/plans/hypershift.md, H4 and H5).
//
// It must not import anything above lab.
package hypershift
