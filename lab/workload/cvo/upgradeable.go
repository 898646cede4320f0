package cvo

import (
	"fmt"
	"slices"
	"strings"
	"time"

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

// Upgradeable condition types: the real operator writes one per check that
// fails (UpgradeableClusterOperators for the cluster operators'), and
// Upgradeable itself.
const conditionUpgradeableClusterOperators configv1.ClusterStatusConditionType = "UpgradeableClusterOperators"

// operatorsNotUpgradeable is the real operator's cluster-operators check:
// nil when no ClusterOperator reports Upgradeable=False, else a False
// condition naming the one (with its reason) or all of them (sorted by
// name, which the real operator leaves to its cache's order).
func operatorsNotUpgradeable(ops []configv1.ClusterOperator) *configv1.ClusterOperatorStatusCondition {
	type notUp struct {
		name string
		up   *configv1.ClusterOperatorStatusCondition
	}
	var found []notUp
	for i := range ops {
		if up := FindCondition(ops[i].Status.Conditions, configv1.OperatorUpgradeable); up != nil && up.Status == configv1.ConditionFalse {
			found = append(found, notUp{name: ops[i].Name, up: up})
		}
	}
	if len(found) == 0 {
		return nil
	}
	slices.SortFunc(found, func(a, b notUp) int { return strings.Compare(a.name, b.name) })
	cond := &configv1.ClusterOperatorStatusCondition{Type: conditionUpgradeableClusterOperators, Status: configv1.ConditionFalse}
	if len(found) == 1 {
		cond.Reason = found[0].up.Reason
		cond.Message = fmt.Sprintf("Cluster operator %s should not be upgraded between minor versions: %s", found[0].name, found[0].up.Message)
		return cond
	}
	var msgs []string
	for _, f := range found {
		msgs = append(msgs, fmt.Sprintf("Cluster operator %s should not be upgraded between minor versions: %s: %s", f.name, f.up.Reason, f.up.Message))
	}
	cond.Reason = "ClusterOperatorsNotUpgradeable"
	cond.Message = "Multiple cluster operators should not be upgraded between minor versions:\n* " + strings.Join(msgs, "\n* ")
	return cond
}

// setUpgradeable writes the Upgradeable conditions from the cluster
// operators' check, the one upgradeable check the lab has: with it
// failing, its condition and Upgradeable=False with its reason and
// message; with it passing, neither (the real operator removes them).
func setUpgradeable(st *configv1.ClusterVersionStatus, ops []configv1.ClusterOperator, now time.Time) {
	cond := operatorsNotUpgradeable(ops)
	if cond == nil {
		st.Conditions = slices.DeleteFunc(st.Conditions, func(c configv1.ClusterOperatorStatusCondition) bool {
			return c.Type == configv1.OperatorUpgradeable || c.Type == conditionUpgradeableClusterOperators
		})
		return
	}
	setCondition(&st.Conditions, *cond, now)
	setCondition(&st.Conditions, configv1.ClusterOperatorStatusCondition{
		Type: configv1.OperatorUpgradeable, Status: configv1.ConditionFalse, Reason: cond.Reason, Message: cond.Message,
	}, now)
}
