package cvo

import (
	"fmt"

	configv1 "github.com/openshift/api/config/v1"
	"k8s.io/apimachinery/pkg/util/version"
)

// checkRollback is the real operator's ClusterVersionRollback precondition:
// a target below the current one is refused, except a return to the
// cluster's previous version within the same minor release.
func checkRollback(cv *configv1.ClusterVersion, to configv1.Release) *Refusal {
	current, err := version.ParseSemantic(cv.Status.Desired.Version)
	if err != nil {
		return nil // the real precondition does not block on this either
	}
	desired, err := version.ParseSemantic(to.Version)
	if err != nil {
		return preconditionFailed(preconditionRollback, to, "InvalidDesiredVersion", err.Error())
	}
	if !desired.LessThan(current) {
		return nil
	}
	prev, prevImage := previousVersion(cv)
	switch {
	case prev == nil:
		return preconditionFailed(preconditionRollback, to, "LowDesiredVersion",
			fmt.Sprintf("%s is less than the current target %s, and the cluster has no previous Semantic Version", desired, current))
	case !desired.EqualTo(prev):
		return preconditionFailed(preconditionRollback, to, "LowDesiredVersion",
			fmt.Sprintf("%s is less than the current target %s, and the only supported rollback is to the cluster's previous version %s (%s)",
				desired, current, prev, prevImage))
	case prev.Major() != current.Major() || prev.Minor() != current.Minor():
		return preconditionFailed(preconditionRollback, to, "LowDesiredVersion",
			fmt.Sprintf("%s is less than the current target %s and matches the cluster's previous version, but rollbacks that change major or minor versions are not recommended",
				desired, current))
	}
	return nil
}

// previousVersion is the newest history entry that is not the current
// target.
func previousVersion(cv *configv1.ClusterVersion) (*version.Version, string) {
	cur := cv.Status.Desired
	for _, h := range cv.Status.History {
		if h.Version == cur.Version && h.Image == cur.Image {
			continue
		}
		v, err := version.ParseSemantic(h.Version)
		if err != nil {
			return nil, ""
		}
		return v, h.Image
	}
	return nil, ""
}

// The real operator's preconditions the lab checks, by name.
const (
	preconditionRollback    = "ClusterVersionRollback"
	preconditionUpgradeable = "ClusterVersionUpgradeable"
)

func preconditionFailed(name string, to configv1.Release, reason, msg string) *Refusal {
	return &Refusal{
		Reason: ReasonPreconditionChecks,
		Message: fmt.Sprintf("Preconditions failed for payload loaded version=%q image=%q: Precondition %q failed because of %q: %s",
			to.Version, to.Image, name, reason, msg),
	}
}
