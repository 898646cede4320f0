package releases

import (
	"fmt"
	"strconv"
	"strings"
)

// Where the lab's source registry publishes releases, as quay.io does:
// release images in ocp-release, their components in ocp-v4.0-art-dev.
const (
	SourceReleasePath    = "openshift-release-dev/ocp-release"
	SourceComponentsPath = "openshift-release-dev/ocp-v4.0-art-dev"
	// SourceToolsPath stands for a repository pulled by tag (tools,
	// operators' bundles): mirrored tag-only.
	SourceToolsPath = "openshift4"
	// StaleMirrorPath is an empty first mirror of the components, as a
	// site's older mirror that holds nothing of these releases: pulls go
	// on to the next mirror, so a reader that keeps only the first mirror
	// of a source (MGMT-12866) fails.
	StaleMirrorPath = "edge-cache/release"
)

// MirrorSet is a source repository and where it is mirrored, in order.
type MirrorSet struct {
	Source  string
	Mirrors []MirrorLocation
}

// MirrorLocation is one mirror of a source.
type MirrorLocation struct {
	Location string
	// TagOnly mirrors serve pulls by tag only (an ImageTagMirrorSet);
	// the others pulls by digest only (an ImageDigestMirrorSet).
	TagOnly bool
}

// OCMirrorSets are the mirrors of a source registry's releases in a
// mirror registry, as oc-mirror's ImageDigestMirrorSet names them, with
// the stale first mirror of the components and a tag-only mirror of the
// tools repository.
func OCMirrorSets(source, mirror string) []MirrorSet {
	return []MirrorSet{
		{Source: source + "/" + SourceReleasePath, Mirrors: []MirrorLocation{{Location: mirror + "/" + MirrorReleaseImagesPath}}},
		{Source: source + "/" + SourceComponentsPath, Mirrors: []MirrorLocation{
			{Location: mirror + "/" + StaleMirrorPath}, {Location: mirror + "/" + MirrorComponentsPath}}},
		{Source: source + "/" + SourceToolsPath, Mirrors: []MirrorLocation{{Location: mirror + "/" + SourceToolsPath, TagOnly: true}}},
	}
}

// RegistriesConf is a containers-registries.conf(5) version 2 for sets,
// as the machine-config operator writes one from IDMS and ITMS: one
// [[registry]] per source, each mirror with its pull-from-mirror. Every
// mirror is insecure = true because the lab's registries speak plain
// HTTP, which containers/image uses only for insecure registries.
func RegistriesConf(sets []MirrorSet) string {
	var b strings.Builder
	b.WriteString("unqualified-search-registries = []\n")
	for _, s := range sets {
		fmt.Fprintf(&b, "\n[[registry]]\n  prefix = \"\"\n  location = %s\n", strconv.Quote(s.Source))
		for _, m := range s.Mirrors {
			pull := "digest-only"
			if m.TagOnly {
				pull = "tag-only"
			}
			fmt.Fprintf(&b, "\n  [[registry.mirror]]\n    location = %s\n    insecure = true\n    pull-from-mirror = %s\n",
				strconv.Quote(m.Location), strconv.Quote(pull))
		}
	}
	return b.String()
}
