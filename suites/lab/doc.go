// Package labsuite is the lab self-test suite (ginkgo, Label("lab")): it
// proves the lab itself works — the hub answers, every CRD is served, the
// real Cluster API controllers reconcile through their webhooks, and
// teardown leaves nothing behind, also after a crash.
//
// Run it with `make e2e-parity` (until parity scenarios exist) or
// `go tool ginkgo --label-filter=lab ./suites/lab`.
package labsuite
