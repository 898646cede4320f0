package releases_test

import (
	"archive/tar"
	"context"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/remote/transport"

	"github.com/paritylab/paritylab/lab/binaries"
	"github.com/paritylab/paritylab/lab/releases"
	"github.com/paritylab/paritylab/lab/releases/releasestest"
	"github.com/paritylab/paritylab/lab/workload"
	"github.com/paritylab/paritylab/providers/controlplane/release"
)

// pushLab serves the lab's releases from Debian's registry.
func pushLab(t *testing.T) (string, []releases.Pushed) {
	t.Helper()
	return releasestest.Serve(t, releases.Lab)
}

// readFile reads one file of an image's flattened filesystem.
func readFile(t *testing.T, img v1.Image, path string) []byte {
	t.Helper()
	rc := mutate.Extract(img)
	defer rc.Close()
	tr := tar.NewReader(rc)
	for {
		hdr, err := tr.Next()
		if err != nil {
			t.Fatalf("%s not in the image: %v", path, err)
		}
		if hdr.Name == path {
			b, err := io.ReadAll(tr)
			if err != nil {
				t.Fatal(err)
			}
			return b
		}
	}
}

// TestTheProvidersResolveTheLabReleases: the control-plane provider's
// resolver reads each release from the registry, by tag and by digest,
// as it reads a real payload.
func TestTheProvidersResolveTheLabReleases(t *testing.T) {
	_, pushed := pushLab(t)
	ctx := context.Background()
	for _, p := range pushed {
		for _, ref := range []string{p.Tag, p.Image} {
			info, err := (&release.Remote{}).Resolve(ctx, ref, nil, nil)
			if err != nil {
				t.Fatalf("resolve %s: %v", ref, err)
			}
			if info.Version != p.Version || info.KubernetesVersion != "v"+p.Kubernetes || info.Image != p.Image {
				t.Errorf("resolve %s: %+v, want version %s, Kubernetes v%s, image %s", ref, info, p.Version, p.Kubernetes, p.Image)
			}
		}
	}
	if pushed[0].Image == pushed[1].Image || pushed[1].Image == pushed[2].Image {
		t.Errorf("releases share a digest: %s %s %s", pushed[0].Image, pushed[1].Image, pushed[2].Image)
	}
}

// TestAPayloadIsWhatOcWrites: metadata with the version and its update
// edges, image-references naming the version with every component by a
// digest the registry has, the release label.
func TestAPayloadIsWhatOcWrites(t *testing.T) {
	_, pushed := pushLab(t)
	p := pushed[1]
	ref, err := name.ParseReference(p.Image)
	if err != nil {
		t.Fatal(err)
	}
	img, err := remote.Image(ref)
	if err != nil {
		t.Fatal(err)
	}
	var meta releases.Metadata
	if err := json.Unmarshal(readFile(t, img, releases.MetadataPath), &meta); err != nil {
		t.Fatal(err)
	}
	if meta.Kind != "cincinnati-metadata-v0" || meta.Version != "4.21.1" || strings.Join(meta.Previous, ",") != "4.21.0" {
		t.Errorf("release metadata %+v", meta)
	}
	var is releases.ImageReferences
	if err := json.Unmarshal(readFile(t, img, release.ImageReferencesPath), &is); err != nil {
		t.Fatal(err)
	}
	if is.Metadata.Name != "4.21.1" || len(is.Spec.Tags) != len(releases.Components) {
		t.Fatalf("image-references named %q with %d tags, want 4.21.1 with %d", is.Metadata.Name, len(is.Spec.Tags), len(releases.Components))
	}
	for _, tag := range is.Spec.Tags {
		d, err := name.NewDigest(tag.From.Name)
		if err != nil {
			t.Errorf("component %s is not by digest: %v", tag.Name, err)
			continue
		}
		if tag.From.Name != p.Components[tag.Name] {
			t.Errorf("component %s: image-references %s, pushed %s", tag.Name, tag.From.Name, p.Components[tag.Name])
		}
		if _, err := remote.Head(d); err != nil {
			t.Errorf("component %s %s is not in the registry: %v", tag.Name, d, err)
		}
	}
	cfg, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Config.Labels[releases.ReleaseLabel] != "4.21.1" {
		t.Errorf("labels %v, want %s=4.21.1", cfg.Config.Labels, releases.ReleaseLabel)
	}
	// Components differ from one release to the next.
	if pushed[0].Components["hyperkube"] == p.Components["hyperkube"] {
		t.Error("4.21.0 and 4.21.1 share their hyperkube image")
	}
}

// TestAReleaseNotInTheRegistryFailsAsUpstream: a tag or digest the
// registry does not have is the registry's MANIFEST_UNKNOWN, through the
// providers' resolver too.
func TestAReleaseNotInTheRegistryFailsAsUpstream(t *testing.T) {
	repo, _ := pushLab(t)
	missing := []string{
		release.Image(repo, "4.99.0", releases.Architecture),
		repo + "@sha256:" + strings.Repeat("ab", 32),
	}
	for _, ref := range missing {
		_, err := (&release.Remote{}).Resolve(context.Background(), ref, nil, nil)
		var terr *transport.Error
		if !errors.As(err, &terr) || len(terr.Errors) == 0 || terr.Errors[0].Code != transport.ManifestUnknownErrorCode {
			t.Errorf("resolve %s: %v, want the registry's MANIFEST_UNKNOWN", ref, err)
		}
	}
}

func TestPushRejectsAReleaseWithoutVersions(t *testing.T) {
	_, err := releases.Push(context.Background(), releases.PushInput{Repository: "127.0.0.1:1/ocp/release",
		Releases: []releases.Release{{Version: "4.21:1"}}})
	if err == nil || !strings.Contains(err.Error(), `"4.21:1"`) || !strings.Contains(err.Error(), "Kubernetes version") {
		t.Fatalf("Push of a bad release: %v, want errors naming the version and the missing Kubernetes version", err)
	}
}

// TestTheInstalledReleaseShipsTheLabsKubernetes: clusters are installed at
// the first release, whose nodes run the lab's Kubernetes binaries.
func TestTheInstalledReleaseShipsTheLabsKubernetes(t *testing.T) {
	if got, want := "v"+releases.Lab[0].Kubernetes, binaries.KubernetesVersion; got != want {
		t.Errorf("release %s ships Kubernetes %s, the lab runs %s", releases.Lab[0].Version, got, want)
	}
	if releases.Lab[0].Version != workload.DefaultVersion {
		t.Errorf("the lab's first release is %s, workload clusters default to %s", releases.Lab[0].Version, workload.DefaultVersion)
	}
}
