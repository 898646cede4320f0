package imagepull_test

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/paritylab/paritylab/lab/imagepull"
	"github.com/paritylab/paritylab/lab/ports"
	"github.com/paritylab/paritylab/lab/releases"
	"github.com/paritylab/paritylab/lab/releases/releasestest"
)

// noRouteTo refuses the source's address, as a guest has no route to it.
func noRouteTo(host string) func(ctx context.Context, network, address string) (net.Conn, error) {
	return func(ctx context.Context, network, address string) (net.Conn, error) {
		if h, _, _ := net.SplitHostPort(address); h == host {
			return nil, fmt.Errorf("dial %s: connect: no route to host", address)
		}
		var d net.Dialer
		return d.DialContext(ctx, network, address)
	}
}

func writeConf(t *testing.T, conf string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "registries.conf")
	if err := os.WriteFile(path, []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestPullThroughOcMirrorConfig pulls a release and a component named in
// a disconnected site's source through the oc-mirror registries.conf, as
// a host does: both come from the mirror by digest (the component from
// its second mirror, the first being stale), and the source's own log
// shows no request; a pull by tag, which the digest-only mirrors do not
// serve, goes to the source and fails there.
func TestPullThroughOcMirrorConfig(t *testing.T) {
	ctx := context.Background()
	site := releasestest.DisconnectedSite(t, releases.Lab[:1])
	source, mirror, pushed := site.Source, site.Mirror, site.Published
	conf := writeConf(t, site.RegistriesConf)
	sourceBefore := len(releasestest.Requests(t, source))
	const agent = "paritylab-agent/test-host"

	rel, err := imagepull.Pull(ctx, imagepull.Input{Image: pushed[0].Image, RegistriesConf: conf, UserAgent: agent, Dial: noRouteTo(ports.Unrouted)})
	if err != nil {
		t.Fatal(err)
	}
	_, digest, _ := strings.Cut(pushed[0].Image, "@")
	if want := mirror.Host() + "/" + releases.MirrorReleaseImagesPath + "@" + digest; rel.Source != want || rel.Digest != digest || len(rel.Tried) != 0 {
		t.Errorf("release pulled as %+v, want from %s first", rel, want)
	}
	if rel.Blobs < 2 {
		t.Errorf("release pull read %d blobs, want its config and layers", rel.Blobs)
	}

	comp, err := imagepull.Pull(ctx, imagepull.Input{Image: pushed[0].Components["installer"], RegistriesConf: conf, UserAgent: agent, Dial: noRouteTo(ports.Unrouted)})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(comp.Source, mirror.Host()+"/"+releases.MirrorComponentsPath+"@") || len(comp.Tried) != 1 ||
		!strings.Contains(comp.Tried[0].Error(), releases.StaleMirrorPath) {
		t.Errorf("component pulled as %+v, want from the second mirror after the stale one failed", comp)
	}
	if got := releasestest.Requests(t, source)[sourceBefore:]; len(got) != 0 {
		t.Errorf("the source answered %+v for pulls by digest", got)
	}
	var manifests int
	for _, r := range releasestest.Requests(t, mirror) {
		if r.Kind == "manifest" && r.Method == "GET" && r.ByDigest() && r.Status == 200 && strings.HasPrefix(r.UserAgent, agent+" ") {
			manifests++
		}
	}
	if manifests != 2 {
		t.Errorf("the mirror's log shows %d manifests pulled by digest by %s, want 2: %+v", manifests, agent, releasestest.Requests(t, mirror))
	}

	_, err = imagepull.Pull(ctx, imagepull.Input{Image: pushed[0].Tag, RegistriesConf: conf, UserAgent: agent, Dial: noRouteTo(ports.Unrouted)})
	if err == nil || !strings.Contains(err.Error(), "no route to host") || !strings.Contains(err.Error(), source.Host()) {
		t.Errorf("pull by tag: %v, want the source tried and unreachable", err)
	}
}

// TestSourcesFollowContainersSemantics checks the registries.conf rules
// the pulls take from containers/image: mirror order, pull-from-mirror,
// mirror-by-digest-only, blocked, and no file at all.
func TestSourcesFollowContainersSemantics(t *testing.T) {
	const digest = "@sha256:" + "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
	conf := writeConf(t, `
[[registry]]
location = "quay.io/ocp/release"
blocked = true
[[registry.mirror]]
location = "mirror.lab/a"
insecure = true
[[registry.mirror]]
location = "mirror.lab/tags"
pull-from-mirror = "tag-only"

[[registry]]
location = "registry.example/tools"
mirror-by-digest-only = true
[[registry.mirror]]
location = "mirror.lab/tools"
`)
	cases := []struct {
		name, path, image string
		want              []imagepull.Source
	}{
		{name: "digest: digest mirrors, then the blocked source", path: conf, image: "quay.io/ocp/release" + digest,
			want: []imagepull.Source{{Reference: "mirror.lab/a" + digest, Insecure: true}, {Reference: "quay.io/ocp/release" + digest, Blocked: true}}},
		{name: "tag: every mirror but digest-only ones", path: conf, image: "quay.io/ocp/release:4.21.0",
			want: []imagepull.Source{{Reference: "mirror.lab/a:4.21.0", Insecure: true}, {Reference: "mirror.lab/tags:4.21.0"}, {Reference: "quay.io/ocp/release:4.21.0", Blocked: true}}},
		{name: "mirror-by-digest-only: a tag goes to the source", path: conf, image: "registry.example/tools:v1",
			want: []imagepull.Source{{Reference: "registry.example/tools:v1"}}},
		{name: "an unconfigured registry is its own source", path: conf, image: "registry.example/other" + digest,
			want: []imagepull.Source{{Reference: "registry.example/other" + digest}}},
		{name: "no registries.conf", path: filepath.Join(t.TempDir(), "absent.conf"), image: "quay.io/ocp/release" + digest,
			want: []imagepull.Source{{Reference: "quay.io/ocp/release" + digest}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := imagepull.Sources(c.path, c.image)
			if err != nil {
				t.Fatal(err)
			}
			if fmt.Sprint(got) != fmt.Sprint(c.want) {
				t.Errorf("sources %+v, want %+v", got, c.want)
			}
		})
	}
	if _, err := imagepull.Pull(context.Background(), imagepull.Input{Image: "quay.io/ocp/release" + digest, RegistriesConf: conf,
		Dial: noRouteTo("mirror.lab")}); err == nil || !strings.Contains(err.Error(), "registry is blocked in "+conf) {
		t.Errorf("pull with a blocked source and no mirror answering: %v, want the source named blocked", err)
	}
}

func TestBadRegistriesConfIsAnError(t *testing.T) {
	conf := writeConf(t, "[[registry]]\nlocation = \"quay.io/a\"\n[[registry.mirror]]\nlocation = \"\"\n")
	if _, err := imagepull.Sources(conf, "quay.io/a:1"); err == nil || !strings.Contains(err.Error(), conf) {
		t.Errorf("a mirror without a location: %v, want an error naming %s", err, conf)
	}
}
