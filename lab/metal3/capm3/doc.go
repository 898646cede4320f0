// Package capm3 is the lab's host layer in the role of the metal3 Cluster
// API infrastructure provider (CAPM3): controllers for Metal3Cluster,
// Metal3Machine (whose Metal3MachineTemplates CAPI core clones) and
// Metal3Remediation, on CAPM3's v1beta1 API, which implements the v1beta1
// infrastructure contract: core reads status.ready, spec.providerID and
// status.addresses.
//
// Upstream CAPM3 cannot run in the lab (it is not a Go module of the
// verified dependency set); this package implements its observable
// behaviour from the contract (shared/reference/parity.md): host choice
// among the BareMetalHosts of the Metal3Machine's namespace, consumerRef
// kind Metal3Machine, the metal3.io/BareMetalHost annotation, providerID
// metal3://<namespace>/<host>/<metal3machine>, provisioning through the
// host's image and userData, deprovisioning on delete, and Reboot
// remediation that hands the Machine to its owner (OwnerRemediated=False)
// once its retries are spent.
//
// Differences from CAPM3, on purpose: no Metal3Data/IPAM (metaData and
// networkData Secrets are passed through when given), no node reuse, and
// the providerID is not written to the workload Node: the lab's nodes
// register with the providerID the bootstrap provider gives them.
//
// It must not import anything above lab.
package capm3
