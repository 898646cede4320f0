package workload

import (
	"context"
	"strings"
	"testing"
	"time"

	configv1 "github.com/openshift/api/config/v1"

	"github.com/paritylab/paritylab/lab/releases"
	"github.com/paritylab/paritylab/lab/releases/releasestest"
	"github.com/paritylab/paritylab/lab/workload/cvo"
	"github.com/paritylab/paritylab/providers/controlplane/release"
)

// TestClusterVersionOperatorReadsTheRegistry: given a registry to read, the
// operator takes an update's version from the payload it retrieves and
// refuses an image the registry does not serve, as the real one does; the
// lab's releases are in Debian's registry.
func TestClusterVersionOperatorReadsTheRegistry(t *testing.T) {
	repo, pushed := releasestest.Serve(t, releases.Lab)
	installed, next := pushed[0], pushed[2]
	c := startCluster(t, Options{
		Name:            "cvo-registry",
		Release:         configv1.Release{Version: installed.Version, Image: installed.Image},
		Payloads:        &release.Remote{},
		UpgradeDuration: 2 * time.Second,
	})
	w := watchClusterVersion(t, c)

	missing := repo + "@sha256:" + strings.Repeat("ab", 32)
	gen := setDesiredUpdate(t, c, configv1.Update{Image: missing, Version: "4.22.1"})
	cv := w.until(t, "the missing image observed", func(cv *configv1.ClusterVersion) bool { return cv.Status.ObservedGeneration == gen })
	wantCondition(t, cv, cvo.ConditionReleaseAccepted, configv1.ConditionFalse, `Retrieving payload failed version="4.22.1" image="`+missing+`"`)
	wantCondition(t, cv, cvo.ConditionReleaseAccepted, configv1.ConditionFalse, "MANIFEST_UNKNOWN")
	if r := cvo.FindCondition(cv.Status.Conditions, cvo.ConditionReleaseAccepted); r == nil || r.Reason != cvo.ReasonRetrievePayload {
		t.Errorf("ReleaseAccepted %+v, want reason %s", r, cvo.ReasonRetrievePayload)
	}
	wantUnchanged(t, cv)

	// A release pushed after the operator failed to retrieve it is taken
	// on its next try (cvo.RetrieveRetry), with no change to the spec.
	later := releases.Release{Version: "4.21.2", Kubernetes: "1.34.6", Previous: []string{"4.21.0"}}
	tag := release.Image(repo, later.Version, releases.Architecture)
	gen = setDesiredUpdate(t, c, configv1.Update{Image: tag, Version: later.Version, Force: true})
	cv = w.until(t, "the missing tag observed", func(cv *configv1.ClusterVersion) bool { return cv.Status.ObservedGeneration == gen })
	wantCondition(t, cv, cvo.ConditionReleaseAccepted, configv1.ConditionFalse, "MANIFEST_UNKNOWN")
	if _, err := releases.Push(context.Background(), releases.PushInput{Repository: repo, Releases: []releases.Release{later}}); err != nil {
		t.Fatal(err)
	}
	w.until(t, later.Version+" Completed after the retry", func(cv *configv1.ClusterVersion) bool {
		return cv.Status.History[0].State == configv1.CompletedUpdate && cv.Status.History[0].Version == later.Version
	})

	// Neither in the update graph nor among the lab's known releases: the
	// version is the one its payload names.
	setDesiredUpdate(t, c, configv1.Update{Image: next.Image})
	done := w.until(t, next.Version+" Completed", func(cv *configv1.ClusterVersion) bool {
		return len(cv.Status.History) > 0 && cv.Status.History[0].State == configv1.CompletedUpdate && cv.Status.History[0].Image == next.Image
	})
	if h := done.Status.History[0]; h.Version != next.Version || !h.Verified {
		t.Errorf("history entry %+v, want version %s read from the payload, verified (by digest)", h, next.Version)
	}
	if done.Status.Desired.Version != next.Version {
		t.Errorf("desired %+v, want version %s", done.Status.Desired, next.Version)
	}
}
