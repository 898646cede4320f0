package cvo

import (
	"context"
	"sync"

	configv1 "github.com/openshift/api/config/v1"

	"github.com/paritylab/paritylab/providers/controlplane/release"
)

// payload is what the operator read of a release image it was asked to
// update to: the version its payload names, or why it could not read it.
type payload struct {
	version string
	// kubernetes is the Kubernetes version it ships (v1.34.4): the
	// kubelet its nodes run.
	kubernetes string
	err        error
}

// fetched answers for the images the operator read; false for one it did
// not read (it has no registry to read from, or the image is the current
// release).
type fetched func(image string) (payload, bool)

func nothingFetched(string) (payload, bool) { return payload{}, false }

// payloads reads release images through a release.Resolver and keeps what
// it read of each: the real operator retrieves the payload of a new
// target once, then works from its copy.
type payloads struct {
	resolver release.Resolver
	mu       sync.Mutex
	read     map[string]payload
}

// fetch reads the image the desired update targets, unless it is the
// current release or was read already, and returns the answers so far.
// A failed read is tried again on the next reconcile, as the real operator
// retries retrieval. The current release is read once, for the kubelet
// its nodes run; a failure to read it is kept (the cluster runs it
// anyway).
// Images are read through regs, the nodes' mirrors (nodeRegistries).
func (p *payloads) fetch(ctx context.Context, cv *configv1.ClusterVersion, regs *release.Registries) fetched {
	if p == nil || p.resolver == nil {
		return nothingFetched
	}
	current := cv.Status.Desired.Image
	if _, done := p.lookup(current); current != "" && !done {
		p.retrieve(ctx, current, regs)
	}
	image := targetImage(cv)
	if got, done := p.lookup(image); image != "" && image != current && (!done || got.err != nil) {
		p.retrieve(ctx, image, regs)
	}
	return p.lookup
}

func (p *payloads) retrieve(ctx context.Context, image string, regs *release.Registries) {
	info, err := p.resolver.Resolve(ctx, image, regs, nil)
	p.mu.Lock()
	defer p.mu.Unlock()
	p.read[image] = payload{version: info.Version, kubernetes: info.KubernetesVersion, err: err}
}

func (p *payloads) lookup(image string) (payload, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	got, ok := p.read[image]
	return got, ok
}

// kubeletOf is the kubelet version of a release the operator read, or ""
// when it did not read it.
func (f fetched) kubeletOf(image string) string {
	if got, ok := f(image); ok && got.err == nil {
		return got.kubernetes
	}
	return ""
}

// targetImage is the release image spec.desiredUpdate asks for: its image,
// or the image of its version in the update graph.
func targetImage(cv *configv1.ClusterVersion) string {
	u := cv.Spec.DesiredUpdate
	switch {
	case u == nil:
		return ""
	case u.Image != "":
		return u.Image
	}
	for _, r := range cv.Status.AvailableUpdates {
		if r.Version == u.Version {
			return r.Image
		}
	}
	return ""
}
