package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/paritylab/paritylab/lab"
	"github.com/paritylab/paritylab/lab/state"
)

// runCLI runs the root command in process and returns what it printed.
func runCLI(t *testing.T, args ...string) (string, error) {
	t.Helper()
	var out bytes.Buffer
	root := newRootCommand()
	root.SetOut(&out)
	root.SetErr(&out)
	root.SetArgs(args)
	err := root.Execute()
	return out.String(), err
}

func TestLabStatusNoLab(t *testing.T) {
	dir := t.TempDir()
	out, err := runCLI(t, "lab", "status", "--state-dir", dir)
	if err != nil {
		t.Fatalf("lab status: %v\n%s", err, out)
	}
	if !strings.Contains(out, "No lab") || !strings.Contains(out, dir) {
		t.Fatalf("lab status printed %q, want it to say there is no lab in %s", out, dir)
	}
}

func TestLabStatusFromLedger(t *testing.T) {
	dir := t.TempDir()
	// The ledger file a lab keeps in its state dir.
	ledger, err := state.Create(filepath.Join(dir, "ledger.json"), "pl-abc123")
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range []state.Resource{state.DirResource(filepath.Join(dir, "hub")), {Kind: state.KindProcess, ID: "1"}, {Kind: state.KindProcess, ID: "2"}} {
		if err := ledger.Track(r); err != nil {
			t.Fatal(err)
		}
	}
	if err := ledger.SetValue("profile", lab.ProfileLocal); err != nil {
		t.Fatal(err)
	}
	out, err := runCLI(t, "lab", "--name", "mylab", "status", "--state-dir", dir)
	if err != nil {
		t.Fatalf("lab status: %v\n%s", err, out)
	}
	for _, want := range []string{
		`Lab "mylab", run pl-abc123, profile local`,
		"ready:      no",
		"not started",
		"3 (1 dir, 2 process)",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("lab status output lacks %q:\n%s", want, out)
		}
	}
}

func TestLabDownNothingToDo(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "does-not-exist")
	out, err := runCLI(t, "lab", "down", "--state-dir", dir)
	if err != nil {
		t.Fatalf("lab down: %v\n%s", err, out)
	}
	if !strings.Contains(out, "nothing to do") {
		t.Fatalf("lab down printed %q, want 'nothing to do'", out)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Fatalf("lab down created %s (stat: %v)", dir, err)
	}
}

func TestLabDownRemovesStateDirWithoutLedger(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "state")
	if err := os.MkdirAll(filepath.Join(dir, "logs"), 0o700); err != nil {
		t.Fatal(err)
	}
	out, err := runCLI(t, "lab", "down", "--state-dir", dir)
	if err != nil {
		t.Fatalf("lab down: %v\n%s", err, out)
	}
	if !strings.Contains(out, "removed") {
		t.Errorf("lab down printed %q, want it to report the removal", out)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Fatalf("state dir still there after lab down (stat: %v)", err)
	}
}

func TestLabRejectsArgs(t *testing.T) {
	for _, sub := range []string{"status", "down"} {
		if _, err := runCLI(t, "lab", sub, "--state-dir", t.TempDir(), "extra"); err == nil {
			t.Errorf("lab %s accepted a positional argument", sub)
		}
	}
}

func TestResolveStateDir(t *testing.T) {
	t.Setenv("XDG_STATE_HOME", "/xdg/state")
	f := &labFlags{name: "ci"}
	got, err := f.resolveStateDir()
	if err != nil || got != "/xdg/state/paritylab/ci" {
		t.Fatalf("resolveStateDir = %q, %v; want /xdg/state/paritylab/ci", got, err)
	}
	f.stateDir = "/explicit"
	if got, err := f.resolveStateDir(); err != nil || got != "/explicit" {
		t.Fatalf("resolveStateDir with --state-dir = %q, %v", got, err)
	}
}

func TestPrintStatus(t *testing.T) {
	st := &lab.Status{
		StateDir:   "/s",
		RunID:      "pl-000001",
		Profile:    "local",
		Created:    time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC),
		Ready:      true,
		Owner:      "paritylab (pid 42)",
		HubServer:  "https://127.0.0.1:6443",
		HubHealth:  "ok",
		Kubeconfig: "/s/kubeconfig",
		LogDir:     "/s/logs",
	}
	var out bytes.Buffer
	printStatus(&out, "default", st)
	for _, want := range []string{
		`Lab "default", run pl-000001, profile local`,
		"state dir:  /s\n",
		"created:    2025-01-02T03:04:05Z",
		"ready:      yes\n",
		"paritylab (pid 42), gone (crashed or killed",
		"hub:        https://127.0.0.1:6443 (ok)\n",
		"kubeconfig: /s/kubeconfig\n",
		"logs:       /s/logs\n",
		"resources:  0 ()\n",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("printStatus output lacks %q:\n%s", want, out.String())
		}
	}
	st.OwnerAlive = true
	out.Reset()
	printStatus(&out, "default", st)
	if !strings.Contains(out.String(), "paritylab (pid 42), running") {
		t.Errorf("printStatus with a live owner:\n%s", out.String())
	}
}
