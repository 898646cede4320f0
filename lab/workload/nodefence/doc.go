// Package nodefence orders the writes to one Node of a workload cluster
// around the write that restores it after a remediation recreated it, so
// that a scenario decides which of two racing writers lands first instead
// of leaving it to chance.
//
// A remediation that deletes a Node (OpenShift's bare-metal Metal3Remediation
// and external-baremetal paths) backs its labels and annotations up and
// writes them back once the Node registered again. The new Node is busy in
// its first seconds: its kubelet reports status, kube-controller-manager
// taints and annotates it, the machine API links it. A restoring client that
// updates from its cache is refused with a conflict when one of those writes
// landed after its read, and what it does then is the remediation's own
// behaviour. Left to timing, a run hits that now and then; the fence makes it
// a choice of the scenario:
//
//   - RestoreFirst holds every other write to the re-registered Node in the
//     API server's admission until the restoring write has landed, so the
//     restore never races;
//   - WriteBeforeRestore does the same, and when the restoring write
//     arrives, first writes the Node itself (an annotation added and taken
//     away again) and only then lets it through: the API server refuses it
//     with 409 Conflict, as it would refuse a write read before another
//     writer's.
//
// The conflict is the API server's own optimistic concurrency; the fence only
// chooses the order. It is a validating admission webhook served on loopback
// with a certificate of its own, registered in the workload cluster for
// updates of the one Node (failure policy Ignore, so a fence that is gone
// stops nothing). The Node is told apart by a marker label the scenario puts
// on it before the failure: the recreated Node lacks it until the restore
// writes it back. The fence orders the first recreation only: a Node whose
// restore was lost never gets the marker back, and a later recreation of it
// is the remediation's business. A write is held at most Options.MaxHold;
// Report says how many were, and whether any hold ran out.
package nodefence
