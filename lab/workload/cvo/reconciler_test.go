package cvo

import (
	"strings"
	"testing"
	"time"

	configv1 "github.com/openshift/api/config/v1"
)

func TestSyncAppliesUpdateThroughHistory(t *testing.T) {
	start := time.Unix(5000, 0)
	r := &Reconciler{UpgradeDuration: time.Minute}
	cv := installed()
	cv.Generation = 2
	cv.Spec.DesiredUpdate = &configv1.Update{Version: "4.22.0"}

	left := r.sync(cv, nil, start, nothingFetched)
	if left != time.Minute {
		t.Errorf("requeue after %s, want 1m", left)
	}
	h := cv.Status.History
	if len(h) != 3 || h[0].State != configv1.PartialUpdate || h[0].Version != "4.22.0" || h[0].CompletionTime != nil ||
		!h[0].StartedTime.Time.Equal(start) || !h[0].Verified {
		t.Fatalf("history after start %+v, want a verified Partial 4.22.0 entry on top", h)
	}
	if cv.Status.Desired.Version != "4.22.0" || cv.Status.ObservedGeneration != 2 {
		t.Errorf("desired %s observedGeneration %d", cv.Status.Desired.Version, cv.Status.ObservedGeneration)
	}
	wantCondition(t, cv, configv1.OperatorProgressing, configv1.ConditionTrue, "Working towards 4.22.0")
	wantCondition(t, cv, configv1.OperatorAvailable, configv1.ConditionTrue, "Done applying 4.21.3")
	wantCondition(t, cv, ConditionReleaseAccepted, configv1.ConditionTrue, `Payload loaded version="4.22.0"`)

	if left := r.sync(cv, nil, start.Add(59*time.Second), nothingFetched); left != time.Second || cv.Status.History[0].State != configv1.PartialUpdate {
		t.Fatalf("after 59s: left %s, state %s; want 1s, Partial", left, cv.Status.History[0].State)
	}
	if left := r.sync(cv, nil, start.Add(time.Minute), nothingFetched); left != 0 {
		t.Errorf("after 1m: left %s", left)
	}
	h = cv.Status.History
	if h[0].State != configv1.CompletedUpdate || h[0].CompletionTime == nil || h[1].Version != "4.21.3" || h[2].Version != "4.21.1" {
		t.Fatalf("history after completion %+v, want Completed 4.22.0, 4.21.3, 4.21.1", h)
	}
	wantCondition(t, cv, configv1.OperatorProgressing, configv1.ConditionFalse, "Cluster version is 4.22.0")
	wantCondition(t, cv, configv1.OperatorAvailable, configv1.ConditionTrue, "Done applying 4.22.0")
	wantCondition(t, cv, ConditionFailing, configv1.ConditionFalse, "")
}

func TestSyncSupersedesUpdateInProgress(t *testing.T) {
	start := time.Unix(5000, 0)
	r := &Reconciler{UpgradeDuration: time.Minute}
	cv := installed()
	cv.Spec.DesiredUpdate = &configv1.Update{Version: "4.21.4"}
	r.sync(cv, nil, start, nothingFetched)
	cv.Spec.DesiredUpdate = &configv1.Update{Version: "4.22.0"}
	r.sync(cv, nil, start.Add(10*time.Second), nothingFetched)
	h := cv.Status.History
	if h[0].Version != "4.22.0" || h[0].State != configv1.PartialUpdate ||
		h[1].Version != "4.21.4" || h[1].State != configv1.PartialUpdate || h[1].CompletionTime == nil {
		t.Fatalf("history %+v, want Partial 4.22.0 on an abandoned Partial 4.21.4 with a completion time", h)
	}
}

func TestSyncRefusalKeepsCurrentRelease(t *testing.T) {
	r := &Reconciler{}
	cv := installed()
	before := len(cv.Status.History)
	cv.Spec.DesiredUpdate = &configv1.Update{Version: "4.99.0"}
	if left := r.sync(cv, nil, time.Unix(9000, 0), nothingFetched); left != 0 {
		t.Errorf("refused update requeues after %s", left)
	}
	if len(cv.Status.History) != before || cv.Status.Desired.Version != "4.21.3" {
		t.Errorf("refused update changed history or desired: %+v", cv.Status)
	}
	wantCondition(t, cv, ConditionReleaseAccepted, configv1.ConditionFalse, "4.99.0")
	wantCondition(t, cv, configv1.OperatorProgressing, configv1.ConditionFalse, "Cluster version is 4.21.3")

	// Taking the update back accepts the current release again.
	cv.Spec.DesiredUpdate = nil
	r.sync(cv, nil, time.Unix(9001, 0), nothingFetched)
	wantCondition(t, cv, ConditionReleaseAccepted, configv1.ConditionTrue, "4.21.3")
}

func wantCondition(t *testing.T, cv *configv1.ClusterVersion, typ configv1.ClusterStatusConditionType, status configv1.ConditionStatus, inMessage string) {
	t.Helper()
	c := FindCondition(cv.Status.Conditions, typ)
	if c == nil || c.Status != status || !strings.Contains(c.Message, inMessage) {
		t.Errorf("condition %s = %+v, want %s with %q", typ, c, status, inMessage)
	}
}

func TestSyncReportsUnavailableOperatorOutsideAnUpdate(t *testing.T) {
	r := &Reconciler{}
	cv := installed()
	down := []configv1.ClusterOperator{{}, {}}
	down[0].Name, down[1].Name = "network", "dns"
	down[0].Status.Conditions = []configv1.ClusterOperatorStatusCondition{{Type: configv1.OperatorAvailable, Status: configv1.ConditionTrue}}
	r.sync(cv, down, time.Unix(9000, 0), nothingFetched)
	wantCondition(t, cv, ConditionFailing, configv1.ConditionTrue, "Cluster operator dns is not available")
	wantCondition(t, cv, configv1.OperatorProgressing, configv1.ConditionFalse,
		"Error while reconciling 4.21.3: the cluster operator dns has not yet successfully rolled out")
	if len(cv.Status.History) != 2 || cv.Status.History[0].State != configv1.CompletedUpdate {
		t.Errorf("history %+v changed", cv.Status.History)
	}
}
