// Package imagepull pulls images the way a host's container runtime does:
// the sources of a reference come from registries.conf, read with
// containers/image's own parser (sysregistriesv2), so its mirror order,
// pull-from-mirror, mirror-by-digest-only, blocked, insecure and prefix
// rules are the ones CRI-O and podman apply, and the first source that
// serves the image wins. The lab's agent pulls with it on the hosts, so
// that the registries' logs show what a real host would have pulled
// where.
package imagepull

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"go.podman.io/image/v5/docker/reference"
	"go.podman.io/image/v5/pkg/sysregistriesv2"
	"go.podman.io/image/v5/types"
)

// Input is one pull.
type Input struct {
	// Image is the reference to pull, by digest or tag.
	Image string
	// RegistriesConf is the path of the registries.conf to follow; a
	// missing file means no mirrors, as on a host without one.
	RegistriesConf string
	// UserAgent names the client in the registries' logs.
	UserAgent string
	// Dial opens connections to registries; default the network's.
	Dial func(ctx context.Context, network, address string) (net.Conn, error)
}

// Result is what a pull read and from where.
type Result struct {
	// Source is the reference that served the image: a mirror's, or the
	// image's own.
	Source string
	// Digest is the manifest's digest.
	Digest string
	// Blobs is how many blobs (config and layers) were read.
	Blobs int
	// Tried are the sources that failed before Source answered, with why.
	Tried []error
}

// Pull reads the image's manifest and every blob it names from the first
// source that serves it. The error of a pull no source served names every
// source tried and why it failed.
func Pull(ctx context.Context, in Input) (Result, error) {
	sources, err := Sources(in.RegistriesConf, in.Image)
	if err != nil {
		return Result{}, err
	}
	var res Result
	for _, src := range sources {
		if src.Blocked {
			res.Tried = append(res.Tried, fmt.Errorf("%s: registry is blocked in %s", src.Reference, in.RegistriesConf))
			continue
		}
		d, blobs, err := pullFrom(ctx, in, src)
		if err == nil {
			res.Source, res.Digest, res.Blobs = src.Reference, d, blobs
			return res, nil
		}
		res.Tried = append(res.Tried, fmt.Errorf("%s: %w", src.Reference, err))
	}
	return res, fmt.Errorf("pull %s: %w", in.Image, errors.Join(res.Tried...))
}

// Source is where a pull may be served from, in the order tried.
type Source struct {
	// Reference is the image's reference at the source.
	Reference string
	Insecure  bool
	// Blocked: the image's own registry, which registries.conf blocks; a
	// pull never reaches it.
	Blocked bool
}

// Sources are an image's pull sources under the registries.conf at path
// (a missing file: the image's own registry only), the image's own
// registry last.
func Sources(path, image string) ([]Source, error) {
	ref, err := reference.ParseNormalizedNamed(image)
	if err != nil {
		return nil, fmt.Errorf("parse image %q: %w", image, err)
	}
	own := []Source{{Reference: ref.String()}}
	if path == "" {
		return own, nil
	}
	if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
		return own, nil
	}
	sys := &types.SystemContext{SystemRegistriesConfPath: path, SystemRegistriesConfDirPath: path + ".d"}
	reg, err := sysregistriesv2.FindRegistry(sys, ref.String())
	if err != nil {
		return nil, fmt.Errorf("registries configuration %s: %w", path, err)
	}
	if reg == nil {
		return own, nil
	}
	pulls, err := reg.PullSourcesFromReference(ref)
	if err != nil {
		return nil, fmt.Errorf("pull sources of %s: %w", image, err)
	}
	var out []Source
	for i, p := range pulls {
		own := i == len(pulls)-1
		out = append(out, Source{Reference: p.Reference.String(), Insecure: p.Endpoint.Insecure, Blocked: own && reg.Blocked})
	}
	return out, nil
}

// pullFrom reads the manifest and its blobs from one source.
func pullFrom(ctx context.Context, in Input, src Source) (digest string, blobs int, err error) {
	var opts []name.Option
	if src.Insecure {
		opts = append(opts, name.Insecure)
	}
	ref, err := name.ParseReference(src.Reference, opts...)
	if err != nil {
		return "", 0, err
	}
	t := remote.DefaultTransport.(*http.Transport).Clone()
	if in.Dial != nil {
		t.DialContext = in.Dial
	}
	ropts := []remote.Option{remote.WithContext(ctx), remote.WithTransport(t)}
	if in.UserAgent != "" {
		ropts = append(ropts, remote.WithUserAgent(in.UserAgent))
	}
	desc, err := remote.Get(ref, ropts...)
	if err != nil {
		return "", 0, err
	}
	img, err := desc.Image()
	if err != nil {
		return "", 0, fmt.Errorf("read image: %w", err)
	}
	n, err := readBlobs(img)
	return desc.Digest.String(), n, err
}

// readBlobs reads the image's config and layers, as a pull stores them.
func readBlobs(img v1.Image) (int, error) {
	if _, err := img.RawConfigFile(); err != nil {
		return 0, fmt.Errorf("read config: %w", err)
	}
	layers, err := img.Layers()
	if err != nil {
		return 1, fmt.Errorf("read layers: %w", err)
	}
	for _, l := range layers {
		rc, err := l.Compressed()
		if err != nil {
			return 1, fmt.Errorf("read layer: %w", err)
		}
		_, err = io.Copy(io.Discard, rc)
		rc.Close()
		if err != nil {
			return 1, fmt.Errorf("read layer: %w", err)
		}
	}
	return 1 + len(layers), nil
}
