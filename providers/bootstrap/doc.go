// Package bootstrap is the entry point of the OpenShift assisted bootstrap
// provider: it registers the provider's types, controllers
// (OpenshiftAssistedConfig, Agent) and validating webhooks with a
// controller-runtime manager. The manager binary
// (cmd/openshift-assisted-bootstrap-manager) and the lab's in-process hub
// both call it, so they run the same code.
//
// It must not import anything of the lab.
package bootstrap
