// Package mapi runs the OpenShift machine API in a workload cluster, as
// OpenShift runs it there: machine-api-operator's Machine (with drain),
// MachineSet, MachineHealthCheck and nodelink controllers, used as they
// are, with a bare-metal actuator of ours behind the Machine controller,
// the lab's bare-metal operator (lab/metal3) for the cluster's
// BareMetalHosts in openshift-machine-api, and a node client CSR approver
// in the role of cluster-machine-approver.
//
// The actuator is a port of the upstream bare-metal actuator
// (openshift/cluster-api-provider-baremetal, actuator.go): host choice
// among the Machine's namespace's BareMetalHosts, consumerRef kind
// Machine, the metal3.io/BareMetalHost and machine.openshift.io/instance-state
// annotations, InsufficientResources while no host is free, Exists only
// while the host is provisioned (or externally provisioned, unmanaged,
// registering), providerID baremetalhost:///<ns>/<bmh>/<uid> set once on
// the Machine and its Node, image and user data provisioning,
// deprovisioning on delete, and the external-baremetal remediation
// strategy of MachineHealthChecks with its power-on timeout. As upstream's
// manager wrapper does, MAO's Machine controllers also watch
// BareMetalHosts and Nodes.
//
// Next to it runs a port of the same repository's Metal3Remediation
// controller (metal3remediation_controller.go and the remediation
// manager): MHCs whose remediationTemplate names a
// Metal3RemediationTemplate get reboots with node backup and restore, a
// retry limit, the capi.metal3.io/unhealthy host annotation and the
// deletion of reprovisionable Machines. Its CRDs are CAPM3's v1beta1
// version, which the upstream controller serves (crds.MachineAPIRemediation).
// The workload cluster's API server calls a port of the same repository's
// Metal3Remediation(Template) webhooks (pkg/webhook: Reboot only, a
// timeout of at least 100 s, at least one retry; templates defaulted to
// Reboot, 600 s, one retry), served on loopback by the machine API's
// manager and configured with MAO's own webhook configurations (failure
// policy Ignore), also when the upstream machine controller binary runs
// with its webhook server off.
//
// Start also does what the installer does for the machine API of a
// bare-metal cluster: it writes the shared worker user data Secret
// (worker-user-data, a bootstrap credential instead of per-node
// identities) and a worker MachineSet whose providerSpec names the lab's
// node image, served from a loopback HTTP server. For the hosts the
// cluster's install put in it (Options.Installed: ZTP hosts) it writes
// what an installer on the BareMetal platform leaves: per host an
// externally provisioned BareMetalHost without BMC access, with the
// status cache assisted-service adds (the agent's hardware, powered on;
// the bare-metal operator takes it as the host's first status); the
// control-plane hosts consumed by the installer's <infra>-master-<i>
// Machines, which name them back; the worker hosts left for the worker
// MachineSet (sized to the installed workers), whose Machines the
// installer controller (a port of assisted-installer's controller in the
// installed cluster) gives them. The actuator finds those Machines
// existing and only links them. A day-2
// ZTP host gets what assisted-service's BMAC writes, through
// AddInstalledHost while its agent installs: the hub host's spec without
// BMC (so unmanaged as well) and an unowned Machine
// <clusterdeployment>-<baremetalhost> with the control-plane image, which
// stays Provisioned until its Node joins.
//
// Differences from OpenShift, on purpose, because of the lab's network
// (every guest is 10.0.2.15 behind QEMU user-mode networking, so IPs name
// no host): a Machine's addresses hold the host name the BareMetalHost's
// hardware details report or, as the lab's out-of-band inspection reports
// none, the BareMetalHost's name (the host name its config drive metadata
// gives the node); the actuator writes the providerID to the Node of that
// name when no nodeRef names one yet, so that the upstream nodelink
// controller links by providerID.
package mapi
