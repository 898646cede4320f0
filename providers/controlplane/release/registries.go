package release

import (
	"fmt"
	"strings"

	"github.com/BurntSushi/toml"
)

// Registries is registry configuration from a containers-registries.conf(5)
// (version 2) file and a CA bundle.
type Registries struct {
	// Entries are the [[registry]] tables.
	Entries []Registry
	// CABundle is PEM certificates trusted besides the system's.
	CABundle []byte
}

// Registry is one [[registry]] table.
type Registry struct {
	Prefix   string `toml:"prefix"`
	Location string `toml:"location"`
	Insecure bool   `toml:"insecure"`
	Blocked  bool   `toml:"blocked"`
	// MirrorByDigestOnly: the mirrors serve pulls by digest only.
	MirrorByDigestOnly bool     `toml:"mirror-by-digest-only"`
	Mirrors            []Mirror `toml:"mirror"`
}

// Mirror is one [[registry.mirror]] table.
type Mirror struct {
	Location string `toml:"location"`
	Insecure bool   `toml:"insecure"`
	// PullFromMirror is "all" (the default), "digest-only" (an
	// ImageDigestMirrorSet's mirror) or "tag-only" (an ImageTagMirrorSet's).
	PullFromMirror string `toml:"pull-from-mirror"`
}

// serves says whether the mirror serves a pull by digest (byDigest) or by
// tag, as containers-registries.conf(5) says.
func (m Mirror) serves(byDigest, digestOnly bool) bool {
	switch m.PullFromMirror {
	case "digest-only":
		return byDigest
	case "tag-only":
		return !byDigest
	}
	return byDigest || !digestOnly
}

// ParseRegistries parses a registries.conf; an empty one configures
// nothing.
func ParseRegistries(conf string, caBundle []byte) (*Registries, error) {
	var file struct {
		Registries []Registry `toml:"registry"`
	}
	if _, err := toml.Decode(conf, &file); err != nil {
		return nil, fmt.Errorf("parse registries.conf: %w", err)
	}
	return &Registries{Entries: file.Registries, CABundle: caBundle}, nil
}

// source is where an image may be pulled from: a repository and whether it
// speaks plain HTTP.
type source struct {
	repository string
	insecure   bool
}

// sources lists where repository (registry/path) may be pulled from, by
// digest or by tag, in order: the mirrors of the registry entry with the
// longest matching prefix that serve such a pull, then the repository
// itself unless that entry blocks it.
func (r *Registries) sources(repository string, byDigest bool) []source {
	if r == nil {
		return []source{{repository: repository}}
	}
	var best *Registry
	var bestPrefix string
	for i := range r.Entries {
		e := &r.Entries[i]
		prefix := e.Prefix
		if prefix == "" {
			prefix = e.Location
		}
		if matches(repository, prefix) && len(prefix) > len(bestPrefix) {
			best, bestPrefix = e, prefix
		}
	}
	if best == nil {
		return []source{{repository: repository}}
	}
	rest := strings.TrimPrefix(repository, bestPrefix)
	var out []source
	for _, m := range best.Mirrors {
		if m.serves(byDigest, best.MirrorByDigestOnly) {
			out = append(out, source{repository: m.Location + rest, insecure: m.Insecure})
		}
	}
	if !best.Blocked {
		location := best.Location
		if location == "" {
			location = bestPrefix
		}
		out = append(out, source{repository: location + rest, insecure: best.Insecure})
	}
	return out
}

// matches says whether prefix covers repository at a path boundary.
func matches(repository, prefix string) bool {
	if !strings.HasPrefix(repository, prefix) {
		return false
	}
	rest := repository[len(prefix):]
	return rest == "" || strings.HasPrefix(rest, "/") || strings.HasSuffix(prefix, "/")
}
