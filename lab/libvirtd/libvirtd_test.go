package libvirtd

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/paritylab/paritylab/lab/process"
	"github.com/paritylab/paritylab/lab/state"
)

// The shared daemon outlives every handle but the last. A private registry
// with sleep processes standing in for the daemons checks the bookkeeping.
func TestLastHandleStopsRecordedDaemons(t *testing.T) {
	RegistryDir = t.TempDir()
	t.Cleanup(func() { RegistryDir = "/run/paritylab/libvirtd" })
	ctx := context.Background()
	daemons := fakeDaemons(t, 2)
	mustLocked(t, func() error { return writeDaemon(daemonRecord{Processes: daemons}) })

	var a, b string
	mustLocked(t, func() (err error) { a, err = addUser(); return })
	mustLocked(t, func() (err error) { b, err = addUser(); return })
	if err := release(ctx, a); err != nil {
		t.Fatal(err)
	}
	for _, id := range daemons {
		if !id.Alive() {
			t.Fatalf("%s stopped while a handle remains", id)
		}
	}
	if err := release(ctx, b); err != nil {
		t.Fatal(err)
	}
	for _, id := range daemons {
		if id.Alive() {
			t.Fatalf("%s still runs after the last handle let go", id)
		}
	}
	if _, err := os.Stat(daemonFile()); !os.IsNotExist(err) {
		t.Fatalf("daemon record left: %v", err)
	}
}

// A handle whose process died counts for nothing: its run's ledger reaper
// (or anyone's release) prunes it and stops the daemons.
func TestDeadHandleIsPrunedByTheReaper(t *testing.T) {
	RegistryDir = t.TempDir()
	t.Cleanup(func() { RegistryDir = "/run/paritylab/libvirtd" })
	daemons := fakeDaemons(t, 1)
	mustLocked(t, func() error { return writeDaemon(daemonRecord{Processes: daemons}) })
	dead := filepath.Join(usersDir(), "dead.json")
	raw, _ := json.Marshal(userRecord{Owner: exited(t)})
	if err := os.WriteFile(dead, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := reapUser(context.Background(), state.Resource{Kind: KindUser, ID: dead}); err != nil {
		t.Fatal(err)
	}
	if daemons[0].Alive() {
		t.Fatal("daemon of a crashed run's handle still runs after the reap")
	}
	if err := reapUser(context.Background(), state.Resource{Kind: KindUser, ID: "/etc/passwd"}); err == nil {
		t.Fatal("the reaper must refuse a path outside the registry")
	}
}

// Against the real daemon: a second handle while one answers starts
// nothing, and letting it go leaves the daemon to the first handle.
func TestSecondHandleSharesTheDaemon(t *testing.T) {
	ctx := context.Background()
	first, err := Ensure(ctx, Options{LogDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = first.Stop() })
	second, err := Ensure(ctx, Options{LogDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if second.Started() {
		t.Fatal("Ensure started a second daemon while one answered")
	}
	if err := second.Stop(); err != nil {
		t.Fatal(err)
	}
	if !answers() {
		t.Fatal("letting go of the second handle stopped the daemon the first still uses")
	}
	conn, err := first.Connect()
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	// Registering for domain events works only with the event loop on.
	id, err := conn.DomainEventRebootRegister(nil, nil)
	if err != nil {
		t.Fatalf("register for reboot events: %v", err)
	}
	if err := conn.DomainEventDeregister(id); err != nil {
		t.Fatal(err)
	}
}

func fakeDaemons(t *testing.T, n int) []process.Identity {
	t.Helper()
	var ids []process.Identity
	for range n {
		p, err := process.Start(context.Background(), process.Spec{Name: "fake-daemon", Path: "/bin/sleep", Args: []string{"300"},
			LogPath: filepath.Join(t.TempDir(), "d.log"), KeepWithParent: true})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = p.Stop() })
		ids = append(ids, p.Identity())
	}
	return ids
}

func exited(t *testing.T) process.Identity {
	t.Helper()
	p, err := process.Start(context.Background(), process.Spec{Name: "gone", Path: "/bin/sleep", Args: []string{"300"},
		LogPath: filepath.Join(t.TempDir(), "g.log")})
	if err != nil {
		t.Fatal(err)
	}
	id := p.Identity()
	if err := p.Stop(); err != nil {
		t.Fatal(err)
	}
	return id
}

func mustLocked(t *testing.T, fn func() error) {
	t.Helper()
	if err := withRegistryLock(context.Background(), fn); err != nil {
		t.Fatal(err)
	}
}

// A daemon of ours that runs but does not answer (busy under load) must
// not be taken for a crashed one: stopping it would kill every other
// lab's hosts. Ensure waits for it, and gives up without touching it.
func TestBusyDaemonIsWaitedForNeverStopped(t *testing.T) {
	RegistryDir = t.TempDir()
	t.Cleanup(func() { RegistryDir = "/run/paritylab/libvirtd" })
	daemons := fakeDaemons(t, 2)
	mustLocked(t, func() error { return writeDaemon(daemonRecord{Processes: daemons}) })
	saved, savedWait := probeDaemon, busyDaemonWait
	t.Cleanup(func() { probeDaemon, busyDaemonWait = saved, savedWait })
	busyDaemonWait = 300 * time.Millisecond

	silent := errors.New("connection timed out")
	probeDaemon = func() error { return silent }
	d := &Daemon{opts: Options{LogDir: t.TempDir()}}
	err := d.startIfNeeded(context.Background())
	if err == nil || !strings.Contains(err.Error(), "runs but has not answered") || !errors.Is(err, silent) {
		t.Fatalf("got %v, want an error saying the daemon runs but does not answer", err)
	}
	for _, id := range daemons {
		if !id.Alive() {
			t.Fatalf("%s was stopped while it ran", id)
		}
	}

	calls := 0
	probeDaemon = func() error {
		if calls++; calls < 3 {
			return silent
		}
		return nil
	}
	busyDaemonWait = 10 * time.Second
	if err := d.startIfNeeded(context.Background()); err != nil || d.Started() {
		t.Fatalf("a daemon that answers after a while must be used, not replaced: err=%v started=%v", err, d.Started())
	}
}
