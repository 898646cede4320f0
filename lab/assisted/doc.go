// Package assisted is the lab's assisted service: the behaviour of
// assisted-service behind its Kubernetes API (InfraEnv, Agent,
// AgentClusterInstall, ClusterDeployment, the ZTP binding of
// BareMetalHosts) and its agent REST API, driven by the real agents in the
// lab's VMs. It builds each InfraEnv's discovery ISO and serves it, with
// the node image that installation writes, from a loopback HTTP server.
//
// Upstream assisted-service cannot run in this lab; this package implements
// what the flows observe of it, to the shapes of its API types.
//
// It must not import anything above lab.
package assisted
