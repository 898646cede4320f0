// Package conformance is a ginkgo suite (Label("conformance")) that checks
// a bootstrap provider and a control-plane provider against the Cluster
// API v1beta2 provider contracts, and an infrastructure provider against
// the contract its CRDs declare (v1beta2, or v1beta1 which Cluster API
// still reads): CRD shape and contract labels, the status fields Cluster
// API reads and what they must mean (provisioned, spec.providerID,
// addresses, the control plane endpoint), labels, owner references, the
// names, types and keys of the Secrets providers write, the /scale
// subresource, pausing, and an infrastructure provider's clusterctl
// manifests (provider label, metadata.yaml's contract).
//
// It is written against the contract, not against this repository's
// providers: provider objects are unstructured, their kinds are
// parameters, and what only a given provider needs to get going (an
// assisted-service install for ours) comes in as a hook of the spec's
// input. BootstrapProviderSpec, ControlPlaneProviderSpec and
// InfrastructureProviderSpec can be pointed at any provider running
// against a management cluster; the Check* functions return errors that
// say which rule failed and why, and are usable outside ginkgo.
//
// The suite in this directory runs them against the OpenShift assisted
// providers and the agent infrastructure provider on a lab hub (`make
// test`), and shows them failing readably for providers that leave out a
// contract field:
//
//	go test ./suites/conformance                                # as make test does
//	go tool ginkgo --label-filter='conformance && controlplane' ./suites/conformance
//	go tool ginkgo --label-filter='conformance && infrastructure' ./suites/conformance
//
// It is imported by nothing.
package conformance
