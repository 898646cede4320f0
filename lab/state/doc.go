// Package state is the ledger of a lab run: every process, directory and
// (later) libvirt object a run creates is recorded in a JSON file in the
// run's state directory before it is relied on, so that `paritylab lab down`
// from another process, or after a crash, can remove exactly what the run
// made and nothing else.
//
// It imports only lab/process.
package state
