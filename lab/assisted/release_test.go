package assisted

import (
	"context"
	"slices"
	"strings"
	"testing"

	hivev1 "github.com/openshift/hive/apis/hive/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/paritylab/paritylab/lab/ports"
	"github.com/paritylab/paritylab/lab/releases"
	"github.com/paritylab/paritylab/lab/releases/releasestest"
	"github.com/paritylab/paritylab/providers/controlplane/release/releasetest"
)

// TestReleaseVersion: a release on loopback (the lab's registry) is read,
// by digest or tag, and one the registry lacks is an error; a release
// elsewhere, which the lab never contacts, is known by its tag, else by
// the ClusterImageSet name.
func TestReleaseVersion(t *testing.T) {
	reg := releasetest.Start()
	defer reg.Close()
	byDigest, err := reg.Push("ocp/release", "4.17.3", "1.30.5")
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name, image, want, wantErr string
	}{
		// Not on loopback: never read, known by its tag or the name.
		{name: "any", image: "quay.io/openshift-release-dev/ocp-release:4.21.0-x86_64", want: "4.21.0"},
		{name: "openshift-v4.16.1", image: "quay.io/openshift-release-dev/ocp-release@sha256:" + strings.Repeat("0", 64), want: "4.16.1"},
		{name: "no-version", image: "quay.io/openshift-release-dev/ocp-release@sha256:" + strings.Repeat("0", 64), wantErr: "cannot tell the OpenShift version"},
		// On loopback: read, by digest or tag; what the registry lacks
		// fails, whatever the tag or name says.
		{name: "cluster-a", image: byDigest, want: "4.17.3"},
		{name: "cluster-b", image: reg.Host() + "/ocp/release:4.17.3-x86_64", want: "4.17.3"},
		{name: "openshift-v4.16.2", image: reg.Host() + "/ocp/missing@sha256:" + strings.Repeat("0", 64), wantErr: "failed to get release image"},
		{name: "openshift-v4.99.0", image: reg.Host() + "/ocp/release:4.99.0-x86_64", wantErr: "failed to get release image"},
	}
	s := &Service{}
	for _, c := range cases {
		is := &hivev1.ClusterImageSet{ObjectMeta: metav1.ObjectMeta{Name: c.name}, Spec: hivev1.ClusterImageSetSpec{ReleaseImage: c.image}}
		got, err := s.releaseVersion(context.Background(), is, nil)
		if c.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), c.wantErr) {
				t.Errorf("%s: err = %v, want %q", c.name, err, c.wantErr)
			}
			continue
		}
		if err != nil || got.Version != c.want {
			t.Errorf("%s: releaseVersion = %q, %v; want %q", c.name, got, err, c.want)
		}
	}
}

// TestReleasePulls: what a host pulls to install a release are the
// release image and its installer image as the release names them, in
// its source, whatever mirror the service read the release from; a
// release the lab does not read gives the hosts nothing to pull.
func TestReleasePulls(t *testing.T) {
	site := releasestest.DisconnectedSite(t, releases.Lab[:1])
	s := &Service{opts: Options{NoRouteTo: []string{ports.Unrouted}}}
	s.releases.Dial = s.dialRegistry
	hub := &MirrorRegistry{RegistriesConf: site.RegistriesConf}
	rel := site.Published[0]
	is := &hivev1.ClusterImageSet{ObjectMeta: metav1.ObjectMeta{Name: "site"}, Spec: hivev1.ClusterImageSetSpec{ReleaseImage: rel.Image}}
	before := len(releasestest.Requests(t, site.Source))
	got, err := s.releaseVersion(context.Background(), is, hub)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{rel.Image, rel.Components["installer"]}; got.Version != rel.Version || !slices.Equal(got.Pulls, want) {
		t.Errorf("release %+v, want version %s and pulls %q", got, rel.Version, want)
	}
	if n := len(releasestest.Requests(t, site.Source)); n != before {
		t.Errorf("the source registry answered %d requests from the service", n-before)
	}

	is.Spec.ReleaseImage = "quay.io/openshift-release-dev/ocp-release:4.21.0-x86_64"
	if got, err := s.releaseVersion(context.Background(), is, nil); err != nil || got.Version != "4.21.0" || got.Pulls != nil {
		t.Errorf("a release the lab does not read: %+v, %v; want 4.21.0 and no pulls", got, err)
	}
}
