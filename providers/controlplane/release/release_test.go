package release_test

import (
	"context"
	"errors"
	"net"
	"strings"
	"testing"

	. "github.com/onsi/gomega"

	"github.com/paritylab/paritylab/providers/controlplane/release"
	"github.com/paritylab/paritylab/providers/controlplane/release/releasetest"
)

func TestImage(t *testing.T) {
	g := NewWithT(t)
	g.Expect(release.Image("quay.io/openshift-release-dev/ocp-release", "4.17.3", "x86_64")).To(Equal("quay.io/openshift-release-dev/ocp-release:4.17.3-x86_64"))
	g.Expect(release.Image("r/x", "4.17.3", "arm64")).To(Equal("r/x:4.17.3-aarch64"))
	g.Expect(release.Image("r/x", "4.17.3", "")).To(Equal("r/x:4.17.3-x86_64"))
}

func TestResolve(t *testing.T) {
	reg := releasetest.Start()
	defer reg.Close()
	digest, err := reg.Push("ocp/release", "4.17.3", "1.30.5")
	if err != nil {
		t.Fatal(err)
	}
	mirror := releasetest.Start()
	defer mirror.Close()
	mirrored, err := mirror.Push("mirror/ocp-release", "4.17.3", "1.30.5")
	if err != nil {
		t.Fatal(err)
	}
	mirrorDigest := mirrored[strings.Index(mirrored, "@"):]
	const upstream = "quay.io/openshift-release-dev/ocp-release"

	cases := []struct {
		name    string
		image   string
		conf    string
		want    release.Info
		wantErr string
	}{
		{
			name:  "tag from the registry itself",
			image: reg.Host() + "/ocp/release:4.17.3-x86_64",
			want:  release.Info{Image: digest, Version: "4.17.3", KubernetesVersion: "v1.30.5"},
		},
		{
			name:  "digest from the registry itself",
			image: digest,
			want:  release.Info{Image: digest, Version: "4.17.3", KubernetesVersion: "v1.30.5"},
		},
		{
			name:  "tag through a mirror, digest in the source repository",
			image: upstream + ":4.17.3-x86_64",
			conf: `
[[registry]]
location = "quay.io/openshift-release-dev/ocp-release"
blocked = true
[[registry.mirror]]
location = "` + mirror.Host() + `/mirror/ocp-release"
`,
			want: release.Info{Image: upstream + mirrorDigest, Version: "4.17.3", KubernetesVersion: "v1.30.5"},
		},
		{
			name:  "digest through a digest-only mirror",
			image: upstream + mirrorDigest,
			conf: `
[[registry]]
location = "quay.io/openshift-release-dev/ocp-release"
mirror-by-digest-only = true
blocked = true
[[registry.mirror]]
location = "` + mirror.Host() + `/mirror/ocp-release"
`,
			want: release.Info{Image: upstream + mirrorDigest, Version: "4.17.3", KubernetesVersion: "v1.30.5"},
		},
		{
			name:  "tag where the mirrors serve digests only (ACM-33187)",
			image: upstream + ":4.17.3-x86_64",
			conf: `
[[registry]]
location = "quay.io/openshift-release-dev/ocp-release"
blocked = true
[[registry.mirror]]
location = "` + mirror.Host() + `/mirror/ocp-release"
pull-from-mirror = "digest-only"
[[registry.mirror]]
location = "` + mirror.Host() + `/mirror/tags-elsewhere"
pull-from-mirror = "tag-only"
`,
			wantErr: mirror.Host() + "/mirror/tags-elsewhere: ",
		},
		{
			name:    "tag, blocked source, digest-only mirrors",
			image:   upstream + ":4.17.3-x86_64",
			conf:    "[[registry]]\nlocation = \"quay.io\"\nblocked = true\nmirror-by-digest-only = true\n[[registry.mirror]]\nlocation = \"" + mirror.Host() + "\"\n",
			wantErr: "its registry is blocked and no mirror serves pulls by tag",
		},
		{
			name:    "blocked source and a mirror without the release",
			image:   upstream + ":4.18.0-x86_64",
			conf:    "[[registry]]\nlocation = \"quay.io\"\nblocked = true\n[[registry.mirror]]\nlocation = \"" + mirror.Host() + "\"\n",
			wantErr: mirror.Host() + "/openshift-release-dev/ocp-release: ",
		},
		{
			name:    "not a release image",
			image:   reg.Host() + "/ocp/release:4.99.0-x86_64",
			wantErr: "MANIFEST_UNKNOWN",
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			regs, err := release.ParseRegistries(tc.conf, nil)
			g.Expect(err).NotTo(HaveOccurred())
			got, err := (&release.Remote{}).Resolve(context.Background(), tc.image, regs, nil)
			if tc.wantErr != "" {
				g.Expect(err).To(MatchError(ContainSubstring(tc.wantErr)))
				return
			}
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(got.Components).To(HaveKeyWithValue("hyperkube", HavePrefix("quay.example/ocp@sha256:")), "components as image-references names them")
			got.Components = nil
			g.Expect(got).To(Equal(tc.want))
		})
	}
}

func TestResolveCaches(t *testing.T) {
	g := NewWithT(t)
	reg := releasetest.Start()
	defer reg.Close()
	_, err := reg.Push("ocp/release", "4.17.3", "1.30.5")
	g.Expect(err).NotTo(HaveOccurred())
	r := &release.Remote{}
	image := reg.Host() + "/ocp/release:4.17.3-x86_64"
	_, err = r.Resolve(context.Background(), image, nil, nil)
	g.Expect(err).NotTo(HaveOccurred())
	before := reg.Requests()
	reg.SetDown(true)
	info, err := r.Resolve(context.Background(), image, nil, nil)
	g.Expect(err).NotTo(HaveOccurred(), "answered from the cache")
	g.Expect(info.KubernetesVersion).To(Equal("v1.30.5"))
	g.Expect(reg.Requests()).To(Equal(before))
}

func TestParseRegistriesRejectsGarbage(t *testing.T) {
	_, err := release.ParseRegistries("[[registry]\nlocation=", nil)
	NewWithT(t).Expect(err).To(MatchError(ContainSubstring("parse registries.conf")))
}

func TestResolveDialsThroughDial(t *testing.T) {
	g := NewWithT(t)
	reg := releasetest.Start()
	defer reg.Close()
	_, err := reg.Push("ocp/release", "4.17.3", "1.30.5")
	g.Expect(err).NotTo(HaveOccurred())
	before := reg.Requests()
	var dialled []string
	r := &release.Remote{Dial: func(_ context.Context, _, address string) (net.Conn, error) {
		dialled = append(dialled, address)
		return nil, errors.New("no route to host")
	}}
	_, err = r.Resolve(context.Background(), reg.Host()+"/ocp/release:4.17.3-x86_64", nil, nil)
	g.Expect(err).To(MatchError(ContainSubstring("no route to host")))
	g.Expect(dialled).NotTo(BeEmpty())
	g.Expect(dialled[0]).To(Equal(reg.Host()))
	g.Expect(reg.Requests()).To(Equal(before), "nothing reached the registry")
}
