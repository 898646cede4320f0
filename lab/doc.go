// Package lab brings a whole lab run up and down: the hub, the CRDs, the
// in-process controllers and (as the lab grows) hosts, BMCs and workload
// clusters. Up is a pipeline of named steps; each reports progress and knows
// how to undo itself, and everything a step creates is recorded in the run's
// ledger first, so Down — in this process, another one, or after a crash —
// removes exactly what the run made.
//
// Subpackages hold the parts, each behind a small interface; this package
// only composes them. It must not import framework, scenarios or suites.
package lab
