package lab

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	"github.com/paritylab/paritylab/lab/ports"
	"github.com/paritylab/paritylab/lab/process"
	"github.com/paritylab/paritylab/lab/releases"
)

// stepRecorder remembers steps in order.
type stepRecorder struct{ started, failed []string }

func (p *stepRecorder) Started(s string) { p.started = append(p.started, s) }
func (p *stepRecorder) Finished(s string, _ time.Duration, err error) {
	if err != nil {
		p.failed = append(p.failed, s)
	}
}

func TestUpStatusDown(t *testing.T) {
	ctx := context.Background()
	stateDir := filepath.Join(t.TempDir(), "lab")
	progress := &stepRecorder{}
	l, err := Up(ctx, Options{StateDir: stateDir, Progress: progress})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = l.Down(ctx) })
	if len(progress.started) != len(l.steps()) || len(progress.failed) != 0 {
		t.Fatalf("progress started %v, failed %v", progress.started, progress.failed)
	}

	st, err := ReadStatus(ctx, stateDir)
	if err != nil {
		t.Fatal(err)
	}
	if !st.Ready || !st.OwnerAlive || st.HubHealth != "ok" || st.RunID != l.RunID() {
		t.Fatalf("status of a running lab: %+v", st)
	}
	if info, err := os.Stat(l.KubeconfigPath()); err != nil || info.Mode().Perm() != 0o600 {
		t.Fatalf("kubeconfig must be 0600: %v %v", info, err)
	}
	// The lab's client knows CAPI types and reads them from the hub.
	if err := l.Client().List(ctx, &clusterv1.ClusterList{}); err != nil {
		t.Fatalf("list Clusters: %v", err)
	}
	// The release registry serves the lab's releases by digest and by tag.
	rel, err := l.Release(releases.Lab[0].Version)
	if err != nil {
		t.Fatal(err)
	}
	for _, ref := range []string{rel.Image, rel.Tag} {
		r, err := name.ParseReference(ref)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := remote.Head(r); err != nil {
			t.Fatalf("the lab registry does not serve %s: %v", ref, err)
		}
	}
	if st.Registry == "" || !strings.HasPrefix(l.ReleaseRepository(), st.Registry+"/") {
		t.Fatalf("status names registry %q, the lab's release repository is %q", st.Registry, l.ReleaseRepository())
	}
	if _, err := l.Release("4.99.0"); err == nil || !strings.Contains(err.Error(), "4.21.0") {
		t.Fatalf("a version the registry lacks: %v, want an error listing the versions it has", err)
	}
	registryProcess := l.registry.Identity()
	site := l.MirrorSite()
	if site == nil || !strings.HasPrefix(site.SourceHost, ports.Unrouted+":") || !strings.HasPrefix(site.MirrorHost, ports.Loopback+":") {
		t.Fatalf("mirror site %+v: want the source on %s and the mirror on %s", site, ports.Unrouted, ports.Loopback)
	}
	if len(site.Mirrored) != len(releases.Lab) {
		t.Fatalf("mirrored %d releases, want %d", len(site.Mirrored), len(releases.Lab))
	}
	if r, err := name.ParseReference(site.Mirrored[0].Image); err != nil {
		t.Fatal(err)
	} else if _, err := remote.Head(r); err != nil {
		t.Fatalf("the mirror does not serve %s: %v", site.Mirrored[0].Image, err)
	}
	siteProcesses := []*process.Identity{l.site.source.Identity(), l.site.mirror.Identity()}

	if _, err := Up(ctx, Options{StateDir: stateDir}); err == nil {
		t.Fatal("a second Up on the same state dir must fail while the first runs")
	}

	if err := l.Down(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(stateDir); !os.IsNotExist(err) {
		t.Fatalf("state dir left after Down: %v", err)
	}
	if registryProcess.Alive() {
		t.Fatal("the registry still runs after Down")
	}
	for _, host := range []string{st.Registry, site.SourceHost, site.MirrorHost} {
		if c, err := net.DialTimeout("tcp", host, time.Second); err == nil {
			c.Close()
			t.Fatalf("%s still accepts connections after Down", host)
		}
	}
	for _, p := range siteProcesses {
		if p.Alive() {
			t.Fatalf("the site's registry %d still runs after Down", p.PID)
		}
	}
	if err := l.Down(ctx); err != nil {
		t.Fatalf("second Down: %v", err)
	}
}

func TestUpCancelledUndoesEverything(t *testing.T) {
	stateDir := filepath.Join(t.TempDir(), "lab")
	ctx, cancel := context.WithCancel(context.Background())
	progress := &cancelAfterHub{cancel: cancel}
	_, err := Up(ctx, Options{StateDir: stateDir, Progress: progress})
	if err == nil {
		t.Fatal("Up must fail when cancelled")
	}
	if _, statErr := os.Stat(stateDir); !os.IsNotExist(statErr) {
		t.Fatalf("a cancelled Up left its state dir: %v (error was %v)", statErr, err)
	}
}

// cancelAfterHub cancels Up as soon as the hub step finished, as a Ctrl-C
// at that moment would.
type cancelAfterHub struct{ cancel context.CancelFunc }

func (c *cancelAfterHub) Started(string) {}
func (c *cancelAfterHub) Finished(step string, _ time.Duration, _ error) {
	if step == "Starting the hub (etcd, kube-apiserver, kube-controller-manager)" {
		c.cancel()
	}
}
