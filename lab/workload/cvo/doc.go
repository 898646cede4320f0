// Package cvo is the lab's simulated cluster-version operator. It runs in the
// lab's process against a workload cluster and does, for the ClusterVersion
// "version" only, what the real operator does at its API: it validates
// spec.desiredUpdate as the real one would (a version must be one of
// status.availableUpdates, an image must be pulled by digest unless forced,
// a downgrade is refused unless forced) and applies an accepted update
// through status.history, newest first: a Partial entry, Progressing=True,
// then after UpgradeDuration a Completed entry and Progressing=False. No
// release payload is pulled and no manifest is applied.
//
// Condition types, reasons and message shapes follow the real operator so
// that a scenario reading them cannot tell the difference.
//
// It imports nothing from the rest of the lab.
package cvo
