// Package controlplane is the entry point of the OpenShift assisted
// control-plane provider: it registers the provider's types, its
// OpenshiftAssistedControlPlane controller and validating webhook with a
// controller-runtime manager. The manager binary
// (cmd/openshift-assisted-controlplane-manager) and the lab's in-process
// hub both call it, so they run the same code.
//
// It must not import anything of the lab.
package controlplane
