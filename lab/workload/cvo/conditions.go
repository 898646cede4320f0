package cvo

import (
	"fmt"
	"runtime"
	"time"

	configv1 "github.com/openshift/api/config/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Condition types the operator sets besides configv1.OperatorAvailable and
// configv1.OperatorProgressing.
const (
	// ConditionFailing is True when the operator cannot reconcile the
	// cluster to the desired release. The simulation never fails.
	ConditionFailing configv1.ClusterStatusConditionType = "Failing"
	// ConditionReleaseAccepted says whether spec.desiredUpdate was accepted.
	ConditionReleaseAccepted configv1.ClusterStatusConditionType = "ReleaseAccepted"
)

// Reasons of ConditionReleaseAccepted.
const (
	// ReasonPayloadLoaded: the desired release is accepted.
	ReasonPayloadLoaded = "PayloadLoaded"
	// ReasonVersionNotFound: a version without an image that is not one of
	// status.availableUpdates.
	ReasonVersionNotFound = "VersionNotFound"
	// ReasonRetrievePayload: the image cannot be verified (not pulled by
	// digest) or the lab knows no release with it.
	ReasonRetrievePayload = "RetrievePayload"
	// ReasonVerifyPayloadVersion: the image's release is not the version
	// the update asked for.
	ReasonVerifyPayloadVersion = "VerifyPayloadVersion"
	// ReasonPreconditionChecks: a precondition refused the update, e.g. a
	// downgrade without force.
	ReasonPreconditionChecks = "PreconditionChecks"
)

// setCondition sets a condition, keeping its transition time when the status
// does not change.
func setCondition(conds *[]configv1.ClusterOperatorStatusCondition, c configv1.ClusterOperatorStatusCondition, now time.Time) {
	c.LastTransitionTime = metav1.NewTime(now)
	for i := range *conds {
		old := &(*conds)[i]
		if old.Type != c.Type {
			continue
		}
		if old.Status == c.Status {
			c.LastTransitionTime = old.LastTransitionTime
		}
		*old = c
		return
	}
	*conds = append(*conds, c)
}

// FindCondition returns the condition of a type, or nil.
func FindCondition(conds []configv1.ClusterOperatorStatusCondition, t configv1.ClusterStatusConditionType) *configv1.ClusterOperatorStatusCondition {
	for i := range conds {
		if conds[i].Type == t {
			return &conds[i]
		}
	}
	return nil
}

// progressState is what keeps an update from completing besides its
// duration: the control-plane nodes waited for, or a failure.
type progressState struct {
	waitingOn []string
	failure   *operatorFailure
}

// setProgressConditions derives Available, Progressing and Failing from the
// history and p, as the real operator reports them: a failure makes
// Failing True and, during an update, Progressing "Unable to apply"
// (the update is not rolled back: it stays Partial and goes on once the
// failure clears), outside one Progressing False with "Error while
// reconciling"; control-plane nodes waited for are the real operator's
// wait on machine-config.
func setProgressConditions(st *configv1.ClusterVersionStatus, now time.Time, p progressState) {
	setCondition(&st.Conditions, configv1.ClusterOperatorStatusCondition{
		Type: configv1.OperatorAvailable, Status: configv1.ConditionTrue,
		Message: "Done applying " + lastCompletedVersion(st.History),
	}, now)
	failing := configv1.ClusterOperatorStatusCondition{Type: ConditionFailing, Status: configv1.ConditionFalse}
	progressing := configv1.ClusterOperatorStatusCondition{
		Type: configv1.OperatorProgressing, Status: configv1.ConditionFalse,
		Message: "Cluster version is " + st.Desired.Version,
	}
	partial := len(st.History) > 0 && st.History[0].State == configv1.PartialUpdate
	switch {
	case p.failure != nil:
		failing.Status, failing.Reason, failing.Message = configv1.ConditionTrue, p.failure.Reason, p.failure.Message
		progressing.Reason = p.failure.Reason
		progressing.Message = "Error while reconciling " + st.Desired.Version + ": " + p.failure.Summary
		if partial {
			progressing.Status = configv1.ConditionTrue
			progressing.Message = "Unable to apply " + st.History[0].Version + ": " + p.failure.Summary
		}
	case partial:
		progressing.Status = configv1.ConditionTrue
		progressing.Message = "Working towards " + st.History[0].Version
		if len(p.waitingOn) > 0 {
			progressing.Reason = "ClusterOperatorUpdating"
			progressing.Message += ": waiting on machine-config"
		}
	}
	setCondition(&st.Conditions, failing, now)
	setCondition(&st.Conditions, progressing, now)
}

func setAccepted(st *configv1.ClusterVersionStatus, r configv1.Release, now time.Time) {
	setCondition(&st.Conditions, configv1.ClusterOperatorStatusCondition{
		Type: ConditionReleaseAccepted, Status: configv1.ConditionTrue, Reason: ReasonPayloadLoaded,
		Message: fmt.Sprintf("Payload loaded version=%q image=%q architecture=%q", r.Version, r.Image, runtime.GOARCH),
	}, now)
}

func setRefused(st *configv1.ClusterVersionStatus, ref *Refusal, now time.Time) {
	setCondition(&st.Conditions, configv1.ClusterOperatorStatusCondition{
		Type: ConditionReleaseAccepted, Status: configv1.ConditionFalse, Reason: ref.Reason, Message: ref.Message,
	}, now)
}

func lastCompletedVersion(h []configv1.UpdateHistory) string {
	for _, e := range h {
		if e.State == configv1.CompletedUpdate {
			return e.Version
		}
	}
	return ""
}
