package lab

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/paritylab/paritylab/lab/registry"
	"github.com/paritylab/paritylab/lab/releases"
)

// ReleaseRepositoryPath is the repository of the lab registry that holds
// the OpenShift releases, as a mirror of quay.io/openshift-release-dev/
// ocp-release would.
const ReleaseRepositoryPath = "openshift/release"

// valueRegistry is the ledger key of the release registry's host.
const valueRegistry = "registry"

func (l *Lab) registryStepName() string {
	var versions []string
	for _, r := range l.opts.Releases {
		versions = append(versions, r.Version)
	}
	return "Starting the release registry (docker-registry) and pushing OpenShift " + strings.Join(versions, ", ")
}

// startRegistry starts the registry and pushes the lab's releases into it.
func (l *Lab) startRegistry(ctx context.Context) error {
	reg, err := registry.Start(ctx, registry.Options{
		Dir: filepath.Join(l.opts.StateDir, "registry"), LogDir: l.opts.LogDir,
		Tracker: l.ledger, Logger: l.opts.Logger.WithName("registry"),
	})
	if err != nil {
		return err
	}
	l.registry = reg
	if err := l.ledger.SetValue(valueRegistry, reg.Host()); err != nil {
		return err
	}
	pushed, err := releases.Push(ctx, releases.PushInput{Repository: l.ReleaseRepository(), Releases: l.opts.Releases})
	if err != nil {
		return err
	}
	l.releases = pushed
	for _, p := range pushed {
		l.opts.Logger.V(1).Info("Release pushed", "version", p.Version, "image", p.Image, "tag", p.Tag)
	}
	return nil
}

func (l *Lab) stopRegistry(context.Context) error {
	if l.registry == nil {
		return nil
	}
	if err := l.registry.Stop(); err != nil {
		return err
	}
	l.registry, l.releases = nil, nil
	return nil
}

// ReleaseRepository is <registry host>/openshift/release, where the lab's
// releases are; empty before the registry runs.
func (l *Lab) ReleaseRepository() string {
	if l.registry == nil {
		return ""
	}
	return l.registry.Host() + "/" + ReleaseRepositoryPath
}

// Releases are the releases in the lab's registry.
func (l *Lab) Releases() []releases.Pushed { return slices.Clone(l.releases) }

// Release is the lab's release of an OpenShift version.
func (l *Lab) Release(version string) (releases.Pushed, error) {
	return FindRelease(l.releases, version)
}

// FindRelease picks the release of a version from a registry's releases,
// or says which versions the registry has.
func FindRelease(in []releases.Pushed, version string) (releases.Pushed, error) {
	var have []string
	for _, p := range in {
		if p.Version == version {
			return p, nil
		}
		have = append(have, p.Version)
	}
	return releases.Pushed{}, fmt.Errorf("OpenShift %s is not in the lab's release registry (it has %s)", version, strings.Join(have, ", "))
}
