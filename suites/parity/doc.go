// Package parity is the paired-scenario suite behind `make e2e-parity`:
// it brings one lab up for the run (SynchronizedBeforeSuite), runs every
// scenario's MAPI flow and CAPI flow on hosts of identical virtual
// hardware, diffs the two with the results package and writes the JUnit
// of every aspect and the HTML report into $ARTIFACTS.
//
// Scenarios carry labels: `ginkgo --label-filter=day2-scale
// ./suites/parity` runs one; --focus matches spec names.
package parity
