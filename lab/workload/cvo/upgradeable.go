package cvo

import (
	configv1 "github.com/openshift/api/config/v1"
	"k8s.io/apimachinery/pkg/util/version"
)

// checkUpgradeable is the real operator's ClusterVersionUpgradeable
// precondition: while the ClusterVersion's Upgradeable condition is
// False, an update to another minor or major version is refused with
// that condition's reason and message; a patch update within the current
// minor version, or a target not above the current one (the rollback
// precondition's matter), passes.
func checkUpgradeable(cv *configv1.ClusterVersion, to configv1.Release) *Refusal {
	up := FindCondition(cv.Status.Conditions, configv1.OperatorUpgradeable)
	if up == nil || up.Status != configv1.ConditionFalse {
		return nil
	}
	current, err := version.ParseSemantic(cv.Status.Desired.Version)
	if err != nil {
		return nil // the real precondition only warns: an update fixes it
	}
	target, err := version.ParseSemantic(to.Version)
	if err != nil {
		return preconditionFailed(preconditionUpgradeable, to, "InvalidDesiredVersion", err.Error())
	}
	patchOnly := target.Major() == current.Major() && target.Minor() == current.Minor()
	if patchOnly || !current.LessThan(target) {
		return nil
	}
	return preconditionFailed(preconditionUpgradeable, to, up.Reason, up.Message)
}
