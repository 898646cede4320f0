package releases_test

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/paritylab/paritylab/lab/registry"
	"github.com/paritylab/paritylab/lab/releases"
	"github.com/paritylab/paritylab/lab/releases/releasestest"
	"github.com/paritylab/paritylab/providers/controlplane/release"
)

// TestMirrorAsOcMirror publishes two releases in a source registry laid
// out as quay.io, mirrors them as oc-mirror does, and reads them through
// the mirrors' registries.conf: by digest from the mirror, the source
// untouched; by tag, which digest-only mirrors do not serve, from the
// source.
func TestMirrorAsOcMirror(t *testing.T) {
	ctx := context.Background()
	source, mirror := releasestest.Registry(t, "source", ""), releasestest.Registry(t, "mirror", "")
	pushed, err := releases.Push(ctx, releases.PushInput{
		Repository:          source.Host() + "/" + releases.SourceReleasePath,
		ComponentRepository: source.Host() + "/" + releases.SourceComponentsPath,
		Releases:            releases.Lab[:2],
	})
	if err != nil {
		t.Fatal(err)
	}
	if c := pushed[0].Components["hyperkube"]; !strings.HasPrefix(c, source.Host()+"/"+releases.SourceComponentsPath+"@sha256:") {
		t.Fatalf("component %s is not in the components' repository", c)
	}
	mirrored, err := releases.Mirror(ctx, releases.MirrorInput{Releases: pushed, Registry: mirror.Host()})
	if err != nil {
		t.Fatal(err)
	}
	for i, m := range mirrored {
		_, srcDigest, _ := strings.Cut(pushed[i].Image, "@")
		if m.Image != mirror.Host()+"/openshift/release-images@"+srcDigest {
			t.Errorf("release %s mirrored as %s, want the source's digest %s in openshift/release-images", m.Source.Version, m.Image, srcDigest)
		}
		if m.Tag != mirror.Host()+"/openshift/release-images:"+m.Source.Version+"-x86_64" {
			t.Errorf("release tag %s", m.Tag)
		}
		head(t, m.Tag, true)
		for c, ref := range pushed[i].Components {
			_, d, _ := strings.Cut(ref, "@")
			if m.Components[c] != mirror.Host()+"/openshift/release@"+d {
				t.Errorf("component %s mirrored as %s", c, m.Components[c])
			}
			head(t, mirror.Host()+"/openshift/release:"+m.Source.Version+"-x86_64-"+c, true)
			head(t, mirror.Host()+"/"+releases.StaleMirrorPath+"@"+d, false)
		}
	}
	conf := releases.RegistriesConf(releases.OCMirrorSets(source.Host(), mirror.Host()))
	regs, err := release.ParseRegistries(conf, nil)
	if err != nil {
		t.Fatalf("the providers cannot parse %s: %v", conf, err)
	}
	sourceBefore := releasestest.Requests(t, source)

	info, err := (&release.Remote{}).Resolve(ctx, pushed[1].Image, regs, nil)
	if err != nil {
		t.Fatal(err)
	}
	if info.Image != pushed[1].Image || info.Version != "4.21.1" || info.KubernetesVersion != "v1.34.5" {
		t.Errorf("through the mirror: %+v, want %s named in the source", info, pushed[1].Image)
	}
	if got := releasestest.Requests(t, source); len(got) != len(sourceBefore) {
		t.Errorf("the source registry answered %+v for a pull by digest", got[len(sourceBefore):])
	}
	var fromMirror bool
	for _, r := range releasestest.Requests(t, mirror) {
		fromMirror = fromMirror || (r.Kind == "manifest" && r.Repository == "openshift/release-images" && r.ByDigest() && r.Status == 200)
	}
	if !fromMirror {
		t.Error("the mirror's log shows no pull of the release by digest")
	}

	if _, err := (&release.Remote{}).Resolve(ctx, pushed[1].Tag, regs, nil); err != nil {
		t.Fatalf("by tag from the source: %v", err)
	}
	var byTag []registry.Request
	for _, r := range releasestest.Requests(t, source)[len(sourceBefore):] {
		if r.Pull() {
			byTag = append(byTag, r)
		}
	}
	if len(byTag) == 0 || byTag[0].ByDigest() || byTag[0].Reference != "4.21.1-x86_64" || byTag[0].Repository != releases.SourceReleasePath {
		t.Errorf("a pull by tag reached the source as %+v, want the tag's manifest first: digest-only mirrors do not serve tags", byTag)
	}
}

func head(t *testing.T, ref string, want bool) {
	t.Helper()
	r, err := name.ParseReference(ref)
	if err != nil {
		t.Fatal(err)
	}
	_, err = remote.Head(r)
	if (err == nil) != want {
		t.Errorf("HEAD %s: %v, want found=%v", ref, err, want)
	}
}
