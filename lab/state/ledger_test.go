package state

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/paritylab/paritylab/lab/process"
)

func TestLedgerPersistsAndReaps(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "ledger.json")
	l, err := Create(path, "run-1")
	if err != nil {
		t.Fatal(err)
	}
	work := filepath.Join(dir, "work")
	if err := os.MkdirAll(filepath.Join(work, "sub"), 0o700); err != nil {
		t.Fatal(err)
	}
	p, err := process.Start(context.Background(), process.Spec{
		Name: "sleeper", Path: "/bin/sleep", Args: []string{"300"},
		LogPath: filepath.Join(work, "sleeper.log"), KeepWithParent: true,
	})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Stop()
	must(t, l.Track(DirResource(work)))
	must(t, l.Track(ProcessResource(p.Identity())))
	must(t, l.Track(ProcessResource(p.Identity()))) // recorded once
	must(t, l.SetValue("kubeconfig", "/x/kubeconfig"))

	info, err := os.Stat(path)
	if err != nil || info.Mode().Perm() != 0o600 {
		t.Fatalf("ledger must be 0600: %v %v", info, err)
	}
	// Another process (lab down) opens the ledger and reaps it.
	other, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	rec := other.Record()
	if rec.RunID != "run-1" || len(rec.Resources) != 2 || rec.Values["kubeconfig"] != "/x/kubeconfig" {
		t.Fatalf("reopened record %+v", rec)
	}
	if err := other.Reap(context.Background()); err != nil {
		t.Fatal(err)
	}
	<-p.Exited()
	if _, err := os.Stat(work); !os.IsNotExist(err) {
		t.Fatalf("dir survived reap: %v", err)
	}
	if n := len(other.Record().Resources); n != 0 {
		t.Fatalf("%d resources left after reap", n)
	}
	must(t, other.Remove())
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Fatal("ledger file survived Remove")
	}
}

func TestCreateRefusesExistingLedger(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ledger.json")
	if _, err := Create(path, "a"); err != nil {
		t.Fatal(err)
	}
	_, err := Create(path, "b")
	if err == nil || !strings.Contains(err.Error(), "lab down") {
		t.Fatalf("want an error pointing at lab down, got %v", err)
	}
}

func TestReapKeepsWhatFailed(t *testing.T) {
	l, err := Create(filepath.Join(t.TempDir(), "ledger.json"), "r")
	if err != nil {
		t.Fatal(err)
	}
	must(t, l.Track(Resource{Kind: "unknown-kind", ID: "x"}))
	must(t, l.Track(DirResource(filepath.Join(t.TempDir(), "gone-already"))))
	err = l.Reap(context.Background())
	if err == nil || !strings.Contains(err.Error(), "no reaper") {
		t.Fatalf("want error for unknown kind, got %v", err)
	}
	if rs := l.Record().Resources; len(rs) != 1 || rs[0].Kind != "unknown-kind" {
		t.Fatalf("want only the failed resource left, got %v", rs)
	}
	if err := l.Remove(); err == nil {
		t.Fatal("Remove must refuse while resources remain")
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
