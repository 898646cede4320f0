package workload

import (
	"context"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	configv1 "github.com/openshift/api/config/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/paritylab/paritylab/lab/ports"
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

// TestAnOperatorNotUpgradeableBlocksMinorUpdates: a ClusterOperator
// reporting Upgradeable=False makes the version's Upgradeable False with
// its reason; a minor update is then refused by the ClusterVersionUpgradeable
// precondition, a patch update is applied, and with the operator
// upgradeable again the minor update goes through.
func TestAnOperatorNotUpgradeableBlocksMinorUpdates(t *testing.T) {
	c := startCluster(t, Options{
		Name:             "cvo-upgradeable",
		AvailableUpdates: []configv1.Release{LabRelease("4.21.1"), LabRelease("4.22.0")},
		UpgradeDuration:  2 * time.Second,
	})
	cl, err := client.New(c.RESTConfig(), client.Options{Scheme: mustScheme(t)})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	co := &configv1.ClusterOperator{ObjectMeta: metav1.ObjectMeta{Name: "kube-apiserver"}}
	if err := cl.Create(ctx, co); err != nil {
		t.Fatal(err)
	}
	w := watchClusterVersion(t, c)
	setOperatorUpgradeable(t, cl, co, configv1.ConditionFalse)
	blocked := w.until(t, "Upgradeable False", func(cv *configv1.ClusterVersion) bool {
		up := cvo.FindCondition(cv.Status.Conditions, configv1.OperatorUpgradeable)
		return up != nil && up.Status == configv1.ConditionFalse
	})
	wantCondition(t, blocked, configv1.OperatorUpgradeable, configv1.ConditionFalse,
		"Cluster operator kube-apiserver should not be upgraded between minor versions: kubelets are two minors behind")
	if up := cvo.FindCondition(blocked.Status.Conditions, configv1.OperatorUpgradeable); up.Reason != "KubeletMinorVersionUpgradeable" {
		t.Errorf("Upgradeable reason %q, want the operator's", up.Reason)
	}

	gen := setDesiredUpdate(t, c, configv1.Update{Version: "4.22.0"})
	cv := w.until(t, "4.22.0 observed", func(cv *configv1.ClusterVersion) bool { return cv.Status.ObservedGeneration == gen })
	wantCondition(t, cv, cvo.ConditionReleaseAccepted, configv1.ConditionFalse,
		`Precondition "ClusterVersionUpgradeable" failed because of "KubeletMinorVersionUpgradeable"`)
	wantUnchanged(t, cv)

	setDesiredUpdate(t, c, configv1.Update{Version: "4.21.1"})
	w.until(t, "4.21.1 Completed", func(cv *configv1.ClusterVersion) bool {
		return cv.Status.History[0].Version == "4.21.1" && cv.Status.History[0].State == configv1.CompletedUpdate
	})

	setOperatorUpgradeable(t, cl, co, configv1.ConditionTrue)
	setDesiredUpdate(t, c, configv1.Update{Version: "4.22.0"})
	done := w.until(t, "4.22.0 Completed", func(cv *configv1.ClusterVersion) bool {
		return cv.Status.History[0].Version == "4.22.0" && cv.Status.History[0].State == configv1.CompletedUpdate
	})
	if up := cvo.FindCondition(done.Status.Conditions, configv1.OperatorUpgradeable); up != nil {
		t.Errorf("Upgradeable %+v once every operator is upgradeable, want no condition (the real operator removes it)", up)
	}
}

func setOperatorUpgradeable(t *testing.T, cl client.Client, co *configv1.ClusterOperator, status configv1.ConditionStatus) {
	t.Helper()
	co.Status.Conditions = []configv1.ClusterOperatorStatusCondition{
		{Type: configv1.OperatorAvailable, Status: configv1.ConditionTrue, Reason: "AsExpected", LastTransitionTime: metav1.Now()},
		{Type: configv1.OperatorUpgradeable, Status: status, Reason: "KubeletMinorVersionUpgradeable",
			Message: "kubelets are two minors behind", LastTransitionTime: metav1.Now()},
	}
	if err := cl.Status().Update(context.Background(), co); err != nil {
		t.Fatal(err)
	}
}

func mustScheme(t *testing.T) *runtime.Scheme {
	t.Helper()
	s, err := Scheme()
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestAnUnavailableOperatorFailsTheUpdate: a ClusterOperator that is not
// Available during an update makes Failing True and Progressing "Unable
// to apply"; the update is not rolled back (it stays Partial, desired
// stays the target) and completes once the operator is Available again.
func TestAnUnavailableOperatorFailsTheUpdate(t *testing.T) {
	c := startCluster(t, Options{
		Name:             "cvo-failing",
		AvailableUpdates: []configv1.Release{LabRelease("4.21.1")},
		UpgradeDuration:  time.Second,
	})
	cl := newClient(t, c.RESTConfig())
	ctx := context.Background()
	co := &configv1.ClusterOperator{ObjectMeta: metav1.ObjectMeta{Name: "network"}}
	if err := cl.Create(ctx, co); err != nil {
		t.Fatal(err)
	}
	setOperatorAvailable(t, cl, co, configv1.ConditionFalse)
	w := watchClusterVersion(t, c)
	setDesiredUpdate(t, c, configv1.Update{Version: "4.21.1"})
	failing := w.until(t, "Failing while network is not available", func(cv *configv1.ClusterVersion) bool {
		f := cvo.FindCondition(cv.Status.Conditions, cvo.ConditionFailing)
		return cv.Status.Desired.Version == "4.21.1" && f != nil && f.Status == configv1.ConditionTrue
	})
	wantCondition(t, failing, cvo.ConditionFailing, configv1.ConditionTrue, "Cluster operator network is not available")
	wantCondition(t, failing, configv1.OperatorProgressing, configv1.ConditionTrue,
		"Unable to apply 4.21.1: the cluster operator network has not yet successfully rolled out")
	wantCondition(t, failing, configv1.OperatorAvailable, configv1.ConditionTrue, "Done applying "+DefaultVersion)
	if f := cvo.FindCondition(failing.Status.Conditions, cvo.ConditionFailing); f.Reason != cvo.ReasonClusterOperatorNotAvailable {
		t.Errorf("Failing reason %q, want %s", f.Reason, cvo.ReasonClusterOperatorNotAvailable)
	}

	// Well past UpgradeDuration, still failing and not rolled back.
	time.Sleep(3 * time.Second)
	held := &configv1.ClusterVersion{}
	if err := cl.Get(ctx, client.ObjectKey{Name: cvo.Name}, held); err != nil {
		t.Fatal(err)
	}
	if h := held.Status.History[0]; h.State != configv1.PartialUpdate || h.Version != "4.21.1" || held.Status.Desired.Version != "4.21.1" {
		t.Fatalf("history head %+v, desired %s; want Partial 4.21.1 kept as the target", h, held.Status.Desired.Version)
	}

	setOperatorAvailable(t, cl, co, configv1.ConditionTrue)
	done := w.until(t, "4.21.1 Completed once network is available", func(cv *configv1.ClusterVersion) bool {
		return cv.Status.History[0].State == configv1.CompletedUpdate
	})
	wantCondition(t, done, cvo.ConditionFailing, configv1.ConditionFalse, "")
	wantCondition(t, done, configv1.OperatorProgressing, configv1.ConditionFalse, "Cluster version is 4.21.1")
}

func setOperatorAvailable(t *testing.T, cl client.Client, co *configv1.ClusterOperator, status configv1.ConditionStatus) {
	t.Helper()
	co.Status.Conditions = []configv1.ClusterOperatorStatusCondition{{Type: configv1.OperatorAvailable, Status: status,
		Reason: "Rollout", Message: "the network daemon set is rolling out", LastTransitionTime: metav1.Now()}}
	if err := cl.Status().Update(context.Background(), co); err != nil {
		t.Fatal(err)
	}
}

// TestClusterVersionOperatorReadsThroughTheNodesMirrors: an update to a
// release named in a disconnected site's source, which the cluster has no
// route to, fails to retrieve until the cluster has an
// ImageDigestMirrorSet for it; then the payload comes from the mirror on
// the next try, the history keeps the source's digest, and the source
// answers nothing.
func TestClusterVersionOperatorReadsThroughTheNodesMirrors(t *testing.T) {
	site := releasestest.DisconnectedSite(t, releases.Lab[:2])
	installed, next := site.Published[0], site.Published[1]
	c := startCluster(t, Options{
		Name:            "cvo-mirrors",
		Release:         configv1.Release{Version: installed.Version, Image: installed.Image},
		Payloads:        &release.Remote{Dial: refuseDial(ports.Unrouted)},
		UpgradeDuration: 2 * time.Second,
	})
	w := watchClusterVersion(t, c)
	before := len(releasestest.Requests(t, site.Source))

	gen := setDesiredUpdate(t, c, configv1.Update{Image: next.Image})
	cv := w.until(t, "the update observed", func(cv *configv1.ClusterVersion) bool { return cv.Status.ObservedGeneration == gen })
	wantCondition(t, cv, cvo.ConditionReleaseAccepted, configv1.ConditionFalse, "no route to host")
	wantUnchanged(t, cv)

	idms := &configv1.ImageDigestMirrorSet{ObjectMeta: metav1.ObjectMeta{Name: "image-digest-mirror"}}
	for _, set := range releases.OCMirrorSets(site.Source.Host(), site.Mirror.Host()) {
		m := configv1.ImageDigestMirrors{Source: set.Source}
		for _, l := range set.Mirrors {
			if !l.TagOnly {
				m.Mirrors = append(m.Mirrors, configv1.ImageMirror(l.Location))
			}
		}
		idms.Spec.ImageDigestMirrors = append(idms.Spec.ImageDigestMirrors, m)
	}
	if err := newClient(t, c.RESTConfig()).Create(context.Background(), idms); err != nil {
		t.Fatal(err)
	}
	done := w.until(t, next.Version+" Completed through the mirror", func(cv *configv1.ClusterVersion) bool {
		return len(cv.Status.History) > 0 && cv.Status.History[0].State == configv1.CompletedUpdate && cv.Status.History[0].Version == next.Version
	})
	if h := done.Status.History[0]; h.Image != next.Image || !h.Verified {
		t.Errorf("history entry %+v, want the source's digest %s, verified", h, next.Image)
	}
	if n := len(releasestest.Requests(t, site.Source)); n != before {
		t.Errorf("the source registry answered %d requests from the cluster", n-before)
	}
}

// refuseDial refuses connections to host, as a network with no route.
func refuseDial(host string) func(ctx context.Context, network, address string) (net.Conn, error) {
	return func(ctx context.Context, network, address string) (net.Conn, error) {
		if h, _, _ := net.SplitHostPort(address); h == host {
			return nil, fmt.Errorf("dial %s %s: connect: no route to host", network, address)
		}
		var d net.Dialer
		return d.DialContext(ctx, network, address)
	}
}
