// Package cvo is the lab's simulated cluster-version operator. It runs in the
// lab's process against a workload cluster and does, for the ClusterVersion
// "version" only, what the real operator does at its API: it validates
// spec.desiredUpdate as the real one would (a version must be one of
// status.availableUpdates, an image must be pulled by digest unless forced,
// a downgrade is refused unless forced, an update to another minor or
// major version is refused while its Upgradeable condition is False unless
// forced) and applies an accepted update
// through status.history, newest first: a Partial entry, Progressing=True,
// then after UpgradeDuration a Completed entry and Progressing=False.
// Given a registry reader (Reconciler.Payloads), it retrieves the release
// image an update targets before it accepts it, as the real operator does:
// the version is the one the payload names, and an image the registry does
// not serve is refused with ReleaseAccepted=False, RetrievePayload, and the
// registry's error. No manifest of the payload is applied.
//
// What the machine-config operator does in an update is modelled for the
// nodes only: every Node is asked, by DesiredKubeletAnnotation, for the
// kubelet of the release the cluster is at (the Kubernetes version its
// payload names), and the lab's node agent reports it from then on, on
// the same Node (in place, as the machine-config daemon updates a node's
// operating system; no reboot is modelled). An update completes once it
// has been Partial for UpgradeDuration and every Ready control-plane node
// reports the new kubelet (the real machine-config operator reports the
// new version once its master pool is updated; worker pools follow without
// holding the update); until then Progressing says it waits on
// machine-config. A Node that joins later is asked for the cluster's
// release.
//
// A ClusterOperator that is not Available fails the release as the real
// operator's health check does at once: Failing=True with
// ClusterOperatorNotAvailable and, during an update, Progressing "Unable to
// apply <version>: …". Nothing is rolled back: the update stays Partial,
// status.desired stays its target, and it completes once the operator is
// Available again. (Every ClusterOperator counts as one of the payload's;
// Degraded, which fails only after an interval, is not modelled.)
//
// Its Upgradeable condition comes from the cluster's ClusterOperators, as
// the real operator's cluster-operators check computes it (one operator's
// reason, or ClusterOperatorsNotUpgradeable for several); its other
// upgradeable checks (overrides, admin acks, deletions) are not modelled.
//
// Condition types, reasons and message shapes follow the real operator so
// that a scenario reading them cannot tell the difference.
//
// It imports nothing from the rest of the lab; it reads release images
// with the providers' release package, as the control-plane provider does.
package cvo
