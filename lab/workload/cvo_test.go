package workload

import (
	"context"
	"strings"
	"testing"
	"time"

	configv1 "github.com/openshift/api/config/v1"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/paritylab/paritylab/lab/workload/cvo"
)

// Each case runs on a cluster of its own installed at DefaultVersion
// (4.21.0) with two available updates.
func TestClusterVersionOperator(t *testing.T) {
	cases := map[string]func(t *testing.T, c *Cluster){
		"accepted update":         testAcceptedUpdate,
		"unknown version refused": testUnknownVersionRefused,
		"update by image":         testUpdateByImage,
		"downgrade without force": testDowngradeRefused,
	}
	for name, run := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			c := startCluster(t, Options{
				Name:             "cvo",
				AvailableUpdates: []configv1.Release{LabRelease("4.21.1"), LabRelease("4.21.2")},
				Releases:         []configv1.Release{LabRelease("4.22.0")},
				UpgradeDuration:  3 * time.Second,
			})
			run(t, c)
		})
	}
}

func testAcceptedUpdate(t *testing.T, c *Cluster) {
	w := watchClusterVersion(t, c)
	gen := setDesiredUpdate(t, c, configv1.Update{Version: "4.21.2"})
	partial := w.until(t, "a Partial 4.21.2 entry", func(cv *configv1.ClusterVersion) bool {
		return len(cv.Status.History) > 0 && cv.Status.History[0].Version == "4.21.2" && cv.Status.History[0].State == configv1.PartialUpdate
	})
	wantCondition(t, partial, configv1.OperatorProgressing, configv1.ConditionTrue, "Working towards 4.21.2")
	wantCondition(t, partial, cvo.ConditionReleaseAccepted, configv1.ConditionTrue, `version="4.21.2"`)
	if h := partial.Status.History[0]; h.CompletionTime != nil || h.StartedTime.IsZero() || !h.Verified || h.Image != LabRelease("4.21.2").Image {
		t.Errorf("Partial entry %+v, want started, not completed, verified, with the release's image", h)
	}
	done := w.until(t, "4.21.2 Completed", func(cv *configv1.ClusterVersion) bool {
		return cv.Status.History[0].Version == "4.21.2" && cv.Status.History[0].State == configv1.CompletedUpdate
	})
	st := done.Status
	if len(st.History) != 2 || st.History[1].Version != DefaultVersion || st.History[1].State != configv1.CompletedUpdate {
		t.Errorf("history %+v, want 4.21.2 then %s, both Completed, newest first", st.History, DefaultVersion)
	}
	if h := st.History[0]; h.CompletionTime == nil || h.CompletionTime.Before(&h.StartedTime) {
		t.Errorf("completed entry %+v, want a completion time after its start", h)
	}
	if st.Desired.Version != "4.21.2" || st.Desired.Image != LabRelease("4.21.2").Image || st.ObservedGeneration != gen {
		t.Errorf("desired %+v observedGeneration %d, want 4.21.2 and %d", st.Desired, st.ObservedGeneration, gen)
	}
	wantCondition(t, done, configv1.OperatorProgressing, configv1.ConditionFalse, "Cluster version is 4.21.2")
	wantCondition(t, done, configv1.OperatorAvailable, configv1.ConditionTrue, "Done applying 4.21.2")
	wantCondition(t, done, cvo.ConditionFailing, configv1.ConditionFalse, "")
}

func testUnknownVersionRefused(t *testing.T, c *Cluster) {
	w := watchClusterVersion(t, c)
	gen := setDesiredUpdate(t, c, configv1.Update{Version: "4.99.0"})
	cv := w.until(t, "the update observed", func(cv *configv1.ClusterVersion) bool { return cv.Status.ObservedGeneration == gen })
	wantCondition(t, cv, cvo.ConditionReleaseAccepted, configv1.ConditionFalse, "4.99.0 is not one of the available updates (4.21.1, 4.21.2)")
	if r := cvo.FindCondition(cv.Status.Conditions, cvo.ConditionReleaseAccepted); r == nil || r.Reason != cvo.ReasonVersionNotFound {
		t.Errorf("ReleaseAccepted %+v, want reason %s", r, cvo.ReasonVersionNotFound)
	}
	wantUnchanged(t, cv)
}

func testUpdateByImage(t *testing.T, c *Cluster) {
	w := watchClusterVersion(t, c)
	image := LabRelease("4.22.0").Image // known to the lab, outside the update graph
	setDesiredUpdate(t, c, configv1.Update{Image: image})
	w.until(t, "a Partial 4.22.0 entry", func(cv *configv1.ClusterVersion) bool {
		return cv.Status.History[0].Image == image && cv.Status.History[0].State == configv1.PartialUpdate
	})
	cv := w.until(t, "4.22.0 Completed", func(cv *configv1.ClusterVersion) bool {
		return cv.Status.History[0].Image == image && cv.Status.History[0].State == configv1.CompletedUpdate
	})
	if h := cv.Status.History[0]; h.Version != "4.22.0" || !h.Verified || cv.Status.Desired.Image != image {
		t.Errorf("history head %+v desired %+v, want verified 4.22.0 by image", h, cv.Status.Desired)
	}
}

func testDowngradeRefused(t *testing.T, c *Cluster) {
	w := watchClusterVersion(t, c)
	old := LabRelease("4.20.5")
	gen := setDesiredUpdate(t, c, configv1.Update{Version: old.Version, Image: old.Image})
	cv := w.until(t, "the downgrade observed", func(cv *configv1.ClusterVersion) bool { return cv.Status.ObservedGeneration == gen })
	wantCondition(t, cv, cvo.ConditionReleaseAccepted, configv1.ConditionFalse,
		"4.20.5 is less than the current target 4.21.0, and the cluster has no previous Semantic Version")
	if r := cvo.FindCondition(cv.Status.Conditions, cvo.ConditionReleaseAccepted); r == nil || r.Reason != cvo.ReasonPreconditionChecks {
		t.Errorf("ReleaseAccepted %+v, want reason %s", r, cvo.ReasonPreconditionChecks)
	}
	wantUnchanged(t, cv)

	// Forced, the same downgrade is applied.
	setDesiredUpdate(t, c, configv1.Update{Version: old.Version, Image: old.Image, Force: true})
	w.until(t, "the forced downgrade Completed", func(cv *configv1.ClusterVersion) bool {
		return cv.Status.History[0].Version == old.Version && cv.Status.History[0].State == configv1.CompletedUpdate
	})
}

// wantUnchanged checks a refused update left the installed release alone.
func wantUnchanged(t *testing.T, cv *configv1.ClusterVersion) {
	t.Helper()
	if len(cv.Status.History) != 1 || cv.Status.Desired.Version != DefaultVersion {
		t.Errorf("refused update changed history %+v or desired %+v", cv.Status.History, cv.Status.Desired)
	}
	wantCondition(t, cv, configv1.OperatorProgressing, configv1.ConditionFalse, "Cluster version is "+DefaultVersion)
}

func wantCondition(t *testing.T, cv *configv1.ClusterVersion, typ configv1.ClusterStatusConditionType, status configv1.ConditionStatus, inMessage string) {
	t.Helper()
	got := cvo.FindCondition(cv.Status.Conditions, typ)
	if got == nil || got.Status != status || !strings.Contains(got.Message, inMessage) {
		t.Errorf("condition %s = %+v, want %s with %q", typ, got, status, inMessage)
	}
}

// setDesiredUpdate patches spec.desiredUpdate and returns the new generation.
func setDesiredUpdate(t *testing.T, c *Cluster, u configv1.Update) int64 {
	t.Helper()
	cl := newClient(t, c.RESTConfig())
	cv := &configv1.ClusterVersion{}
	ctx := context.Background()
	if err := cl.Get(ctx, client.ObjectKey{Name: cvo.Name}, cv); err != nil {
		t.Fatal(err)
	}
	patch := client.MergeFrom(cv.DeepCopy())
	cv.Spec.DesiredUpdate = &u
	if err := cl.Patch(ctx, cv, patch); err != nil {
		t.Fatalf("set desiredUpdate %+v: %v", u, err)
	}
	return cv.Generation
}

// cvWatch sees every state ClusterVersion "version" goes through.
type cvWatch struct{ w watch.Interface }

func watchClusterVersion(t *testing.T, c *Cluster) *cvWatch {
	t.Helper()
	s, err := Scheme()
	if err != nil {
		t.Fatal(err)
	}
	cl, err := client.NewWithWatch(c.RESTConfig(), client.Options{Scheme: s})
	if err != nil {
		t.Fatal(err)
	}
	w, err := cl.Watch(context.Background(), &configv1.ClusterVersionList{}, client.MatchingFields{"metadata.name": cvo.Name})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.Stop)
	return &cvWatch{w: w}
}

// until returns the first state from now on that satisfies cond.
func (w *cvWatch) until(t *testing.T, what string, cond func(*configv1.ClusterVersion) bool) *configv1.ClusterVersion {
	t.Helper()
	timeout := time.After(time.Minute)
	for {
		select {
		case ev, ok := <-w.w.ResultChan():
			if !ok {
				t.Fatalf("ClusterVersion watch closed waiting for %s", what)
			}
			if cv, isCV := ev.Object.(*configv1.ClusterVersion); isCV && len(cv.Status.History) > 0 && cond(cv) {
				return cv
			}
		case <-timeout:
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}
