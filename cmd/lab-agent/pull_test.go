package main

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/paritylab/paritylab/lab/assisted/agentapi"
	"github.com/paritylab/paritylab/lab/releases"
	"github.com/paritylab/paritylab/lab/releases/releasestest"
)

// TestInstallPullsThroughTheDiscoveryMirrors: the agent writes the
// discovery ignition's registries.conf and CA where ignition does, and
// pulls the install's images through it: from the mirror, by digest,
// under its own user agent; the source's log shows nothing. Registries
// named on the host's 127.0.0.1 are reached at the service host.
func TestInstallPullsThroughTheDiscoveryMirrors(t *testing.T) {
	site := releasestest.DisconnectedSite(t, releases.Lab[:1])
	sys := fakeSystem(t)
	cfg := agentapi.DiscoveryConfig{RegistriesConf: site.RegistriesConf, RegistryCA: "site CA\n"}
	if err := sys.writeMirrorConfig(cfg); err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]string{agentapi.RegistriesConfPath: site.RegistriesConf, agentapi.RegistryCAPath: "site CA\n"} {
		raw, err := os.ReadFile(sys.path(path))
		if err != nil || string(raw) != want {
			t.Errorf("%s = %q, %v; want %q", path, raw, err, want)
		}
		if fi, err := os.Stat(sys.path(path)); err != nil || fi.Mode().Perm() != 0o644 {
			t.Errorf("%s mode %v, %v; want 0644", path, fi.Mode(), err)
		}
	}
	rel := site.Published[0]
	before := len(releasestest.Requests(t, site.Source))
	d := &discovery{sys: sys, cfg: cfg, hostID: "host-a", serviceHost: "127.0.0.1"}
	if err := d.pullImages(context.Background(), []string{rel.Image, rel.Components["installer"]}); err != nil {
		t.Fatal(err)
	}
	if n := len(releasestest.Requests(t, site.Source)); n != before {
		t.Errorf("the source answered %d requests", n-before)
	}
	pulled := map[string]bool{}
	for _, r := range releasestest.Requests(t, site.Mirror) {
		if r.Kind == "manifest" && r.Method == "GET" && r.Status == 200 && r.ByDigest() && strings.HasPrefix(r.UserAgent, "paritylab-agent/host-a ") {
			pulled[r.Repository] = true
		}
	}
	if !pulled[releases.MirrorReleaseImagesPath] || !pulled[releases.MirrorComponentsPath] {
		t.Errorf("the mirror served the agent %v, want the release and the installer by digest", pulled)
	}

	// The mirror's host is the service host: one where no registry
	// listens fails the pull, naming every source tried.
	d.serviceHost = "127.0.0.3"
	err := d.pullImages(context.Background(), []string{rel.Image})
	if err == nil || !strings.Contains(err.Error(), "127.0.0.3") || !strings.Contains(err.Error(), rel.Image) {
		t.Errorf("pull with the mirror out of reach: %v, want an error naming the image and the address tried", err)
	}
}
