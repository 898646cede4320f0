// Package capm3 runs the upstream metal3 Cluster API infrastructure
// provider (CAPM3) against the hub: the controller manager that CAPM3
// ships (the main package of github.com/metal3-io/cluster-api-provider-metal3
// at binaries.CAPM3Version, built by `make deps` into the binary cache), as
// a child process, the way openshift-install runs provider managers against
// its local control plane: an admin kubeconfig, a health probe, a log file,
// teardown by PID.
//
// Everything it installs comes from the module at that version: the CRDs
// of config/crd/bases with the contract labels of its kustomization and
// conversion through the manager's /convert endpoint, and the admission
// webhooks of config/webhook/manifests.yaml, pointed at the manager.
//
// A process, not controllers in the lab's own manager: CAPM3's webhooks
// live in an internal package of its module, so only its own main serves
// them. That main has no flag for the webhook server's bind address, so the
// webhook port (picked free, TLS, admission and conversion requests only)
// listens on every interface while the lab runs; health and diagnostics
// listen on loopback. The API server calls the webhooks on loopback.
//
// It must not import anything above lab.
package capm3
