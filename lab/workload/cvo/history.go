package cvo

import (
	"crypto/sha256"
	"encoding/base64"
	"time"

	configv1 "github.com/openshift/api/config/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// maxHistory bounds status.history as the real operator prunes it.
const maxHistory = 100

// begin starts applying t: a new Partial entry on top of the history (an
// update still in progress is abandoned, keeping state Partial and getting
// a completion time, as the real operator records it) and t as
// status.desired.
func begin(st *configv1.ClusterVersionStatus, t target, now time.Time) {
	ts := metav1.NewTime(now)
	if len(st.History) > 0 && st.History[0].CompletionTime == nil {
		st.History[0].CompletionTime = &ts
	}
	entry := configv1.UpdateHistory{
		State:       configv1.PartialUpdate,
		StartedTime: ts,
		Version:     t.release.Version,
		Image:       t.release.Image,
		Verified:    t.verified,
	}
	st.History = append([]configv1.UpdateHistory{entry}, st.History...)
	if len(st.History) > maxHistory {
		st.History = st.History[:maxHistory]
	}
	st.Desired = t.release
	st.VersionHash = versionHash(t.release)
}

// advance completes the newest entry once it has been Partial for d and
// nothing else holds it (unblocked), and returns how long is left otherwise
// (0 when nothing is in progress or only something else holds it).
func advance(st *configv1.ClusterVersionStatus, d time.Duration, now time.Time, unblocked bool) time.Duration {
	if !updating(st) {
		return 0
	}
	head := &st.History[0]
	if left := head.StartedTime.Add(d).Sub(now); left > 0 {
		return left
	}
	if !unblocked {
		return 0
	}
	ts := metav1.NewTime(now)
	head.State, head.CompletionTime = configv1.CompletedUpdate, &ts
	return 0
}

// updating says whether the newest history entry is an update in
// progress.
func updating(st *configv1.ClusterVersionStatus) bool {
	return len(st.History) > 0 && st.History[0].State == configv1.PartialUpdate && st.History[0].CompletionTime == nil
}

// versionHash stands in for the real operator's hash of the payload's
// manifests: it changes whenever the desired release does.
func versionHash(r configv1.Release) string {
	sum := sha256.Sum256([]byte(r.Version + "\x00" + r.Image))
	return base64.RawURLEncoding.EncodeToString(sum[:8])
}

// InstalledStatus is the status of a cluster freshly installed at release
// r: one Completed history entry, r as desired, the given available updates
// and the conditions of a settled cluster.
func InstalledStatus(r configv1.Release, updates []configv1.Release, now time.Time) configv1.ClusterVersionStatus {
	ts := metav1.NewTime(now)
	st := configv1.ClusterVersionStatus{
		Desired:          r,
		VersionHash:      versionHash(r),
		AvailableUpdates: updates,
		History: []configv1.UpdateHistory{{
			State: configv1.CompletedUpdate, StartedTime: ts, CompletionTime: &ts,
			Version: r.Version, Image: r.Image,
			// An installer-provided release is not verified by the
			// operator; the real history shows false here too.
			Verified: false,
		}},
	}
	setAccepted(&st, r, now)
	setProgressConditions(&st, now, progressState{})
	return st
}
