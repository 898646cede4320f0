package lab

import (
	"context"
	"fmt"
	"net"
	"path/filepath"
	"slices"

	"github.com/paritylab/paritylab/lab/ports"
	"github.com/paritylab/paritylab/lab/registry"
	"github.com/paritylab/paritylab/lab/releases"
)

// Names of the disconnected site's registries: their processes in the
// ledger, their logs (<LogDir>/<name>.log) and their hosts' ledger keys.
const (
	SourceRegistryName = "source-registry"
	MirrorRegistryName = "mirror-registry"
)

// mirrorSite is a disconnected site's view of the releases: a source
// registry standing for quay.io, on the loopback address neither the
// VMs nor the hub's components reach, and the site's mirror of it, laid
// out as oc-mirror lays it out.
type mirrorSite struct {
	source, mirror *registry.Registry
	published      []releases.Pushed
	mirrored       []releases.Mirrored
}

// startMirrorSite starts both registries, publishes the lab's releases in
// the source and mirrors them.
func (l *Lab) startMirrorSite(ctx context.Context) error {
	site := &mirrorSite{}
	l.site = site
	for _, r := range []struct {
		name, address string
		into          **registry.Registry
	}{{SourceRegistryName, ports.Unrouted, &site.source}, {MirrorRegistryName, ports.Loopback, &site.mirror}} {
		reg, err := registry.Start(ctx, registry.Options{
			Name: r.name, Address: r.address, Dir: filepath.Join(l.opts.StateDir, r.name), LogDir: l.opts.LogDir,
			Tracker: l.ledger, Logger: l.opts.Logger.WithName(r.name),
		})
		if err != nil {
			return err
		}
		*r.into = reg
		if err := l.ledger.SetValue(r.name, reg.Host()); err != nil {
			return err
		}
	}
	published, err := releases.Push(ctx, releases.PushInput{
		Repository:          site.source.Host() + "/" + releases.SourceReleasePath,
		ComponentRepository: site.source.Host() + "/" + releases.SourceComponentsPath,
		Releases:            l.opts.Releases,
	})
	if err != nil {
		return fmt.Errorf("publish the releases in the source registry: %w", err)
	}
	site.published = published
	mirrored, err := releases.Mirror(ctx, releases.MirrorInput{Releases: published, Registry: site.mirror.Host()})
	if err != nil {
		return err
	}
	site.mirrored = mirrored
	return nil
}

func (l *Lab) stopMirrorSite(context.Context) error {
	if l.site == nil {
		return nil
	}
	for _, reg := range []*registry.Registry{l.site.mirror, l.site.source} {
		if reg == nil {
			continue
		}
		if err := reg.Stop(); err != nil {
			return err
		}
	}
	l.site = nil
	return nil
}

// MirrorSite is the disconnected site the lab serves releases from.
type MirrorSite struct {
	// SourceHost and MirrorHost are the registries' host:port.
	SourceHost, MirrorHost string
	// SourceLog and MirrorLog are their logs, one entry per request
	// (registry.Requests).
	SourceLog, MirrorLog string
	// Published are the releases in the source; Mirrored their copies.
	Published []releases.Pushed
	Mirrored  []releases.Mirrored
	// RegistriesConf is the site's registries.conf: oc-mirror's mirror
	// sets (releases.OCMirrorSets).
	RegistriesConf string
}

// MirrorSite describes the lab's disconnected site; nil before it runs.
func (l *Lab) MirrorSite() *MirrorSite {
	if l.site == nil || l.site.mirror == nil {
		return nil
	}
	s := l.site
	return &MirrorSite{
		SourceHost: s.source.Host(), MirrorHost: s.mirror.Host(),
		SourceLog: s.source.LogPath(), MirrorLog: s.mirror.LogPath(),
		Published: slices.Clone(s.published), Mirrored: slices.Clone(s.mirrored),
		RegistriesConf: releases.RegistriesConf(releases.OCMirrorSets(s.source.Host(), s.mirror.Host())),
	}
}

// hubDial is how the hub's components reach registries: never the
// source registry, which stands for one off the site's network.
func hubDial(ctx context.Context, network, address string) (net.Conn, error) {
	if host, _, err := net.SplitHostPort(address); err == nil && host == ports.Unrouted {
		return nil, fmt.Errorf("dial %s %s: connect: no route to host (the hub is disconnected)", network, address)
	}
	var d net.Dialer
	return d.DialContext(ctx, network, address)
}
