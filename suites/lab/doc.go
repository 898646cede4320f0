// Package labsuite is the lab self-test suite (ginkgo, Label("lab")): it
// proves the lab itself works — the hub answers, every CRD is served, the
// real Cluster API controllers reconcile through their webhooks, hosts
// boot what their BMCs are told, a ZTP install brings up a spoke, both
// machine-management sides (MAO's controllers with the baremetal actuator
// on the spoke; CAPI core with upstream CAPM3 and the agent providers on
// the hub) scale and remediate over the same worker hosts, and teardown
// leaves nothing behind, also after a crash.
//
// Run it with `make e2e-parity` (until parity scenarios exist) or
// `go tool ginkgo --label-filter=lab ./suites/lab`.
package labsuite
