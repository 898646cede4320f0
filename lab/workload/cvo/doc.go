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
