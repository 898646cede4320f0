package releases

import (
	"context"
	"fmt"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/paritylab/paritylab/providers/controlplane/release"
)

// Where oc-mirror (v2) puts a release in a mirror registry: the release
// images in openshift/release-images, tagged <version>-<arch>, and the
// component images in openshift/release, tagged
// <version>-<arch>-<component>; both also by digest, which is how a
// cluster pulls them through its ImageDigestMirrorSet.
const (
	MirrorReleaseImagesPath = "openshift/release-images"
	MirrorComponentsPath    = "openshift/release"
)

// MirrorInput is what Mirror copies where.
type MirrorInput struct {
	// Releases are the releases in their source registry, as Push
	// returned them.
	Releases []Pushed
	// Registry is the mirror registry's host:port.
	Registry string
	// Options go to every registry request, source and mirror.
	Options []remote.Option
}

// Mirrored is a release copied into a mirror registry.
type Mirrored struct {
	// Source is the release where it was published.
	Source Pushed
	// Image is the release image by digest in the mirror: the same digest
	// as Source.Image.
	Image string
	// Tag is the release image by tag in the mirror.
	Tag string
	// Components are the component images by digest in the mirror.
	Components map[string]string
}

// Mirror copies releases from their source into a mirror registry as
// oc-mirror lays them out, over plain HTTP: components first, then the release image, each
// by digest and then tagged. Digests are kept, so the release's
// image-references, which name the components in the source, resolve
// through the mirror.
func Mirror(ctx context.Context, in MirrorInput) ([]Mirrored, error) {
	images, err := name.NewRepository(in.Registry+"/"+MirrorReleaseImagesPath, name.Insecure)
	if err != nil {
		return nil, fmt.Errorf("mirror registry %q: %w", in.Registry, err)
	}
	components := images.Registry.Repo(MirrorComponentsPath)
	opts := append([]remote.Option{remote.WithContext(ctx)}, in.Options...)
	var out []Mirrored
	for _, p := range in.Releases {
		m, err := mirror(p, images, components, opts)
		if err != nil {
			return nil, fmt.Errorf("mirror release %s into %s: %w", p.Version, in.Registry, err)
		}
		out = append(out, m)
	}
	return out, nil
}

func mirror(p Pushed, images, components name.Repository, opts []remote.Option) (Mirrored, error) {
	m := Mirrored{Source: p, Components: map[string]string{}}
	tagPrefix := strings.TrimPrefix(release.Image("", p.Version, Architecture), ":")
	for _, c := range Components {
		ref, err := copyByDigest(p.Components[c.Name], components, tagPrefix+"-"+c.Name, opts)
		if err != nil {
			return m, fmt.Errorf("component %s: %w", c.Name, err)
		}
		m.Components[c.Name] = ref.String()
	}
	ref, err := copyByDigest(p.Image, images, tagPrefix, opts)
	if err != nil {
		return m, fmt.Errorf("release image: %w", err)
	}
	m.Image, m.Tag = ref.String(), images.Tag(tagPrefix).String()
	return m, nil
}

// copyByDigest copies the image src (by digest) into repo by the same
// digest, and tags it.
func copyByDigest(src string, repo name.Repository, tag string, opts []remote.Option) (name.Digest, error) {
	from, err := name.NewDigest(src, name.Insecure)
	if err != nil {
		return name.Digest{}, fmt.Errorf("source %q: %w", src, err)
	}
	img, err := remote.Image(from, opts...)
	if err != nil {
		return name.Digest{}, fmt.Errorf("read %s: %w", src, err)
	}
	to := repo.Digest(from.DigestStr())
	if err := remote.Write(to, img, opts...); err != nil {
		return name.Digest{}, fmt.Errorf("write %s: %w", to, err)
	}
	if err := remote.Tag(repo.Tag(tag), img, opts...); err != nil {
		return name.Digest{}, fmt.Errorf("tag %s: %w", repo.Tag(tag), err)
	}
	return to, nil
}
