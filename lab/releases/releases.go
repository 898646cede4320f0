package releases

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/paritylab/paritylab/providers/controlplane/release"
)

// Release is an OpenShift release the lab serves.
type Release struct {
	// Version is the OpenShift version, e.g. 4.21.1.
	Version string
	// Kubernetes is the Kubernetes version it ships, e.g. 1.34.2.
	Kubernetes string
	// Previous are the versions it updates from (its Cincinnati edges).
	Previous []string
}

// Component is a component image of every release.
type Component struct {
	// Name is its tag in image-references.
	Name string
	// Kubernetes: its build versions name the release's Kubernetes.
	Kubernetes bool
}

func (c Component) buildVersions(r Release) string {
	if !c.Kubernetes {
		return ""
	}
	return "kubernetes=" + r.Kubernetes + ",kubernetes-tests=" + r.Kubernetes
}

// Components are the components the flows read from a payload: the
// cluster-version operator that applies it, hyperkube (the Kubernetes
// version), the CLI, the machine OS image and the installer the assisted
// flow runs on a host.
var Components = []Component{
	{Name: "cluster-version-operator"},
	{Name: "hyperkube", Kubernetes: true},
	{Name: "cli", Kubernetes: true},
	{Name: "rhel-coreos"},
	{Name: "installer"},
}

// Pushed is a release in a registry.
type Pushed struct {
	Release
	// Image is the release image by digest: <repository>@sha256:….
	Image string
	// Tag is the release image by tag: <repository>:<version>-x86_64.
	Tag string
	// Components are the component images by digest, by name.
	Components map[string]string
}

// Architecture is the one architecture the lab's releases are built for.
const Architecture = "x86_64"

// PushInput is what Push pushes where.
type PushInput struct {
	// Repository is <registry host>/<path>, e.g. 127.0.0.1:5000/ocp/release.
	Repository string
	// ComponentRepository holds the component images, as
	// quay.io/openshift-release-dev/ocp-v4.0-art-dev holds those of
	// quay.io/openshift-release-dev/ocp-release. Default Repository.
	ComponentRepository string
	// Releases to push, in order.
	Releases []Release
	// Options go to every registry request (transport, authentication).
	Options []remote.Option
}

// Push builds each release and its components and pushes them, over
// plain HTTP as the lab's registries speak it, into
// Repository: components by digest, then the release by digest, then its
// tag. A release already there is pushed again to the same digests.
func Push(ctx context.Context, in PushInput) ([]Pushed, error) {
	repo, err := name.NewRepository(in.Repository, name.Insecure)
	if err != nil {
		return nil, fmt.Errorf("release repository %q: %w", in.Repository, err)
	}
	components := repo
	if in.ComponentRepository != "" {
		if components, err = name.NewRepository(in.ComponentRepository, name.Insecure); err != nil {
			return nil, fmt.Errorf("component repository %q: %w", in.ComponentRepository, err)
		}
	}
	opts := append([]remote.Option{remote.WithContext(ctx)}, in.Options...)
	var out []Pushed
	for _, r := range in.Releases {
		if err := r.validate(); err != nil {
			return nil, err
		}
		p, err := push(repo, components, r, opts)
		if err != nil {
			return nil, fmt.Errorf("push release %s to %s: %w", r.Version, in.Repository, err)
		}
		out = append(out, p)
	}
	return out, nil
}

func (r Release) validate() error {
	var errs []error
	if r.Version == "" || strings.ContainsAny(r.Version, "/:@ ") {
		errs = append(errs, fmt.Errorf("release version %q must be a version such as 4.21.1", r.Version))
	}
	if r.Kubernetes == "" || strings.ContainsAny(r.Kubernetes, ", ") {
		errs = append(errs, fmt.Errorf("release %s: Kubernetes version %q must be a version such as 1.34.2", r.Version, r.Kubernetes))
	}
	return errors.Join(errs...)
}

func push(repo, components name.Repository, r Release, opts []remote.Option) (Pushed, error) {
	p := Pushed{Release: r, Components: map[string]string{}}
	for _, c := range Components {
		img, err := componentImage(c, r)
		if err != nil {
			return p, fmt.Errorf("build component %s: %w", c.Name, err)
		}
		ref, err := pushByDigest(components, img, opts)
		if err != nil {
			return p, fmt.Errorf("component %s: %w", c.Name, err)
		}
		p.Components[c.Name] = ref.String()
	}
	img, err := releaseImage(r, Components, p.Components)
	if err != nil {
		return p, fmt.Errorf("build the release image: %w", err)
	}
	ref, err := pushByDigest(repo, img, opts)
	if err != nil {
		return p, err
	}
	tag := repo.Tag(strings.TrimPrefix(release.Image("", r.Version, Architecture), ":"))
	if err := remote.Tag(tag, img, opts...); err != nil {
		return p, fmt.Errorf("tag %s: %w", tag, err)
	}
	p.Image, p.Tag = ref.String(), tag.String()
	return p, nil
}

func pushByDigest(repo name.Repository, img v1.Image, opts []remote.Option) (name.Digest, error) {
	digest, err := img.Digest()
	if err != nil {
		return name.Digest{}, err
	}
	ref := repo.Digest(digest.String())
	if err := remote.Write(ref, img, opts...); err != nil {
		return name.Digest{}, fmt.Errorf("push %s: %w", ref, err)
	}
	return ref, nil
}

// Lab are the releases the lab serves: two of one minor release (a GA
// update between them) and the next two minor releases (an update to
// another minor release, and one more for an update gated by an operator
// that is not upgradeable). The first is the one
// clusters are installed at, so its Kubernetes is the one the lab's
// kubelets and control planes run (binaries.KubernetesVersion).
var Lab = []Release{
	{Version: "4.21.0", Kubernetes: "1.34.4"},
	{Version: "4.21.1", Kubernetes: "1.34.5", Previous: []string{"4.21.0"}},
	{Version: "4.22.0", Kubernetes: "1.35.0", Previous: []string{"4.21.0", "4.21.1"}},
	{Version: "4.23.0", Kubernetes: "1.36.0", Previous: []string{"4.22.0"}},
}
