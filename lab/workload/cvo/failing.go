package cvo

import (
	"slices"
	"strings"

	configv1 "github.com/openshift/api/config/v1"
)

// operatorFailure is what stops the operator from applying its release:
// the reason and message of Failing=True, and the summary Progressing
// gives after "Unable to apply <version>: ".
type operatorFailure struct {
	Reason  string
	Message string
	Summary string
}

// Failing reasons the lab reports, the real operator's for a
// ClusterOperator of the payload that is not Available.
const ReasonClusterOperatorNotAvailable = "ClusterOperatorNotAvailable"

// unavailableOperator is the real operator's health check of the payload's
// ClusterOperators as far as it fails at once (not after an interval): a
// ClusterOperator whose Available condition is not True stops the release
// from being applied. Every ClusterOperator of the lab cluster counts as
// one of the payload. The first by name is reported; the real operator
// sums several up under a plural reason, which the lab does not model.
func unavailableOperator(ops []configv1.ClusterOperator) *operatorFailure {
	var names []string
	for i := range ops {
		av := FindCondition(ops[i].Status.Conditions, configv1.OperatorAvailable)
		if av == nil || av.Status != configv1.ConditionTrue {
			names = append(names, ops[i].Name)
		}
	}
	if len(names) == 0 {
		return nil
	}
	slices.SortFunc(names, strings.Compare)
	return &operatorFailure{
		Reason:  ReasonClusterOperatorNotAvailable,
		Message: "Cluster operator " + names[0] + " is not available",
		Summary: "the cluster operator " + names[0] + " has not yet successfully rolled out",
	}
}
