package cvo

import (
	"context"
	"fmt"
	"slices"
	"strings"

	configv1 "github.com/openshift/api/config/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/paritylab/paritylab/providers/controlplane/release"
)

// nodeRegistries is the registries.conf the machine-config operator renders
// on every node from the cluster's ImageDigestMirrorSets and
// ImageTagMirrorSets: the real operator retrieves a release payload in a
// pod, whose pull follows it. One [[registry]] per source, its digest
// mirrors then its tag mirrors in the order the sets list them (each
// once); a source whose policy is NeverContactSource is blocked; a mirror
// listed in images.config.openshift.io's insecureRegistries is insecure.
// A cluster that serves none of these kinds has no mirrors (nil).
func nodeRegistries(ctx context.Context, c client.Client) (*release.Registries, error) {
	idms := &configv1.ImageDigestMirrorSetList{}
	if err := c.List(ctx, idms); err != nil {
		if meta.IsNoMatchError(err) {
			return nil, nil
		}
		return nil, fmt.Errorf("list ImageDigestMirrorSets: %w", err)
	}
	itms := &configv1.ImageTagMirrorSetList{}
	if err := c.List(ctx, itms); err != nil && !meta.IsNoMatchError(err) {
		return nil, fmt.Errorf("list ImageTagMirrorSets: %w", err)
	}
	insecure, err := insecureRegistries(ctx, c)
	if err != nil {
		return nil, err
	}
	b := registriesBuilder{insecure: insecure}
	for _, set := range idms.Items {
		for _, m := range set.Spec.ImageDigestMirrors {
			b.add(m.Source, imageMirrors(m.Mirrors), "digest-only", m.MirrorSourcePolicy == configv1.NeverContactSource)
		}
	}
	for _, set := range itms.Items {
		for _, m := range set.Spec.ImageTagMirrors {
			b.add(m.Source, imageMirrors(m.Mirrors), "tag-only", m.MirrorSourcePolicy == configv1.NeverContactSource)
		}
	}
	if len(b.entries) == 0 {
		return nil, nil
	}
	return &release.Registries{Entries: b.entries}, nil
}

func imageMirrors(in []configv1.ImageMirror) []string {
	out := make([]string, len(in))
	for i, m := range in {
		out[i] = string(m)
	}
	return out
}

// insecureRegistries are images.config.openshift.io/cluster's
// spec.registrySources.insecureRegistries; none when it does not exist.
func insecureRegistries(ctx context.Context, c client.Client) ([]string, error) {
	img := &configv1.Image{}
	err := c.Get(ctx, client.ObjectKey{Name: "cluster"}, img)
	switch {
	case err == nil:
		return img.Spec.RegistrySources.InsecureRegistries, nil
	case meta.IsNoMatchError(err) || client.IgnoreNotFound(err) == nil:
		return nil, nil
	}
	return nil, fmt.Errorf("read images.config.openshift.io cluster: %w", err)
}

type registriesBuilder struct {
	insecure []string
	entries  []release.Registry
}

func (b *registriesBuilder) add(source string, mirrors []string, pull string, blocked bool) {
	i := slices.IndexFunc(b.entries, func(r release.Registry) bool { return r.Location == source })
	if i < 0 {
		b.entries = append(b.entries, release.Registry{Location: source, Insecure: b.isInsecure(source)})
		i = len(b.entries) - 1
	}
	e := &b.entries[i]
	e.Blocked = e.Blocked || blocked
	for _, m := range mirrors {
		if slices.ContainsFunc(e.Mirrors, func(have release.Mirror) bool { return have.Location == m && have.PullFromMirror == pull }) {
			continue
		}
		e.Mirrors = append(e.Mirrors, release.Mirror{Location: m, Insecure: b.isInsecure(m), PullFromMirror: pull})
	}
}

// isInsecure: an insecureRegistries entry names a registry host or a
// repository; it covers location when location is it or lies under it.
func (b *registriesBuilder) isInsecure(location string) bool {
	for _, r := range b.insecure {
		if location == r || strings.HasPrefix(location, strings.TrimSuffix(r, "/")+"/") {
			return true
		}
	}
	return false
}
