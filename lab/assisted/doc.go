// Package assisted is the lab's assisted service: the behaviour of
// assisted-service behind its Kubernetes API (InfraEnv, Agent,
// AgentClusterInstall, ClusterDeployment, the ZTP binding of
// BareMetalHosts) and its agent REST API, driven by the real agents in the
// lab's VMs. It builds each InfraEnv's discovery ISO and serves it, with
// the node image that installation writes, from a loopback HTTP server.
//
// The ZTP binding runs assisted-service's converged flow when
// Options.ConvergedFlow is set (upstream's default, which the lab's hub
// sets): the PreprovisioningImages of an InfraEnv's hosts get the
// InfraEnv's ISO with the ironic agent added, after the image cooldown,
// and the BMAC has the bare-metal operator provision them with the
// start_assisted_install custom deploy (DeployStepDone is that step).
// Without it, the BMAC sets the ISO as a live ISO.
//
// A cluster whose ClusterDeployment is installed before the service sees
// it is imported (cluster-api-provider-agent imports a HyperShift hosted
// cluster so): it accepts day-2 hosts at once, and when its install names
// an ignition endpoint its hosts join through a pointer Ignition to it,
// with the token and headers their Agents name; joining with the bootstrap
// credential that gives them, such a host's client CSR is approved by the
// service, as upstream's agent controller does on platform None. An Agent
// unbound after
// its install waits for its host to boot the discovery image again, which
// the BMAC has the host's BareMetalHost do.
//
// Upstream assisted-service cannot run in this lab; this package implements
// what the flows observe of it, to the shapes of its API types.
//
// It must not import anything above lab.
package assisted
