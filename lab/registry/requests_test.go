package registry_test

import (
	"context"
	"net"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/paritylab/paritylab/lab/ports"
	"github.com/paritylab/paritylab/lab/registry"
)

// TestRequestsRecordsEveryPull pushes an image, pulls it by digest and by
// tag under another client name, asks for one the registry lacks, and
// reads all of it back from the registry's own log.
func TestRequestsRecordsEveryPull(t *testing.T) {
	r, _, _ := startWithLedger(t)
	defer func() {
		if err := r.Stop(); err != nil {
			t.Error(err)
		}
	}()
	img, err := random.Image(256, 1)
	if err != nil {
		t.Fatal(err)
	}
	digest, _ := img.Digest()
	repo, _ := name.NewRepository(r.Host() + "/openshift/release-images")
	if err := remote.Write(repo.Tag("4.21.0-x86_64"), img, remote.WithUserAgent("pusher")); err != nil {
		t.Fatal(err)
	}
	before, err := registry.Requests(r.LogPath())
	if err != nil {
		t.Fatal(err)
	}
	pulled, err := remote.Image(repo.Digest(digest.String()), remote.WithUserAgent("puller"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := pulled.RawConfigFile(); err != nil {
		t.Fatal(err)
	}
	if _, err := remote.Head(repo.Tag("4.21.0-x86_64"), remote.WithUserAgent("puller")); err != nil {
		t.Fatal(err)
	}
	if _, err := remote.Head(repo.Tag("missing"), remote.WithUserAgent("puller")); err == nil {
		t.Fatal("a missing tag was found")
	}
	all, err := registry.Requests(r.LogPath())
	if err != nil {
		t.Fatal(err)
	}
	var pulls []registry.Request
	for _, req := range all[len(before):] {
		if !strings.HasPrefix(req.UserAgent, "puller") {
			t.Errorf("request %s %s by %q, want only the puller's after the push", req.Method, req.URI, req.UserAgent)
		}
		if req.Pull() {
			pulls = append(pulls, req)
		}
	}
	want := []struct {
		method, kind, ref string
		status            int
		byDigest          bool
	}{
		{"GET", "manifest", digest.String(), 200, true},
		{"GET", "blob", "", 200, true}, // the config
		{"HEAD", "manifest", "4.21.0-x86_64", 200, false},
		{"HEAD", "manifest", "missing", 404, false},
	}
	if len(pulls) != len(want) {
		t.Fatalf("pulls = %+v, want %d", pulls, len(want))
	}
	for i, w := range want {
		p := pulls[i]
		if p.Method != w.method || p.Kind != w.kind || p.Status != w.status || p.ByDigest() != w.byDigest ||
			p.Repository != "openshift/release-images" || (w.ref != "" && p.Reference != w.ref) {
			t.Errorf("pull %d = %+v, want %+v in openshift/release-images", i, p, w)
		}
		if !strings.HasPrefix(p.Remote, "127.0.0.1:") || p.Time.IsZero() {
			t.Errorf("pull %d from %q at %v", i, p.Remote, p.Time)
		}
	}
	var sawBase, sawUpload bool
	for _, req := range before {
		sawBase = sawBase || req.Kind == "base"
		sawUpload = sawUpload || (req.Kind == "upload" && req.Repository == "openshift/release-images")
	}
	if !sawBase || !sawUpload {
		t.Errorf("the push's requests %+v lack the API check or the upload", before)
	}
}

func TestRequestsOfNoLog(t *testing.T) {
	got, err := registry.Requests(t.TempDir() + "/none.log")
	if err != nil || got != nil {
		t.Fatalf("Requests of a missing log = %v, %v", got, err)
	}
}

// TestUnroutedRegistry listens where the VMs' gateway does not lead.
func TestUnroutedRegistry(t *testing.T) {
	tmp := t.TempDir()
	r, err := registry.Start(context.Background(), registry.Options{Name: "source", Address: ports.Unrouted,
		Dir: filepath.Join(tmp, "data"), LogDir: tmp})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := r.Stop(); err != nil {
			t.Error(err)
		}
	}()
	if !strings.HasPrefix(r.Host(), ports.Unrouted+":") {
		t.Fatalf("host %s, want one on %s", r.Host(), ports.Unrouted)
	}
	_, port, _ := net.SplitHostPort(r.Host())
	if c, err := net.Dial("tcp", net.JoinHostPort(ports.Loopback, port)); err == nil {
		c.Close()
		t.Errorf("the registry also answers on %s:%s, where a VM's gateway leads", ports.Loopback, port)
	}
	if r.LogPath() != filepath.Join(tmp, "source.log") {
		t.Errorf("log %s", r.LogPath())
	}
	if _, err := remote.Head(mustTag(t, r.Host()+"/openshift4/tools:latest")); err == nil {
		t.Error("an empty registry has an image")
	}
	got, err := registry.Requests(r.LogPath())
	if err != nil || len(got) == 0 || got[len(got)-1].Status != 404 {
		t.Errorf("requests %+v, %v: want the HEAD's 404 recorded", got, err)
	}
}

func mustTag(t *testing.T, s string) name.Tag {
	t.Helper()
	tag, err := name.NewTag(s, name.Insecure) // plain HTTP off 127.0.0.1 too
	if err != nil {
		t.Fatal(err)
	}
	return tag
}
