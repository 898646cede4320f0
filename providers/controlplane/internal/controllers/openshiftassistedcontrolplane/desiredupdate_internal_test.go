package openshiftassistedcontrolplane

import (
	"testing"

	configv1 "github.com/openshift/api/config/v1"

	controlplanev1 "github.com/paritylab/paritylab/providers/controlplane/api/v1alpha3"
)

// CAPOA's rule for what the version operator is asked for: a GA release of
// the default repository by version, anything else by digest and forced.
func TestDesiredUpdate(t *testing.T) {
	const digest = "quay.io/openshift-release-dev/ocp-release@sha256:0123"
	for _, tc := range []struct {
		name, repo, version string
		want                configv1.Update
	}{
		{name: "GA, default repository", version: "4.21.1", want: configv1.Update{Version: "4.21.1"}},
		{name: "GA, default repository named", repo: controlplanev1.DefaultReleaseImageRepository, version: "4.21.1", want: configv1.Update{Version: "4.21.1"}},
		{name: "release candidate", version: "4.22.0-rc.1", want: configv1.Update{Image: digest, Force: true}},
		{name: "nightly", version: "4.22.0-0.nightly-2026-01-30-091858", want: configv1.Update{Image: digest, Force: true}},
		{name: "GA, another repository", repo: "registry.example:5000/ocp/release", version: "4.21.1", want: configv1.Update{Image: digest, Force: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cp := &controlplanev1.OpenshiftAssistedControlPlane{}
			if tc.repo != "" {
				cp.Annotations = map[string]string{controlplanev1.ReleaseImageRepositoryAnnotation: tc.repo}
			}
			s := &scope{cp: cp}
			s.target.Image = digest
			if got := desiredUpdate(s, tc.version); got != tc.want {
				t.Errorf("desiredUpdate(%s) = %+v, want %+v", tc.version, got, tc.want)
			}
		})
	}
}
