package process

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

func sleeper(t *testing.T) Spec {
	t.Helper()
	return Spec{Name: "sleeper", Path: "/bin/sleep", Args: []string{"300"}, LogPath: filepath.Join(t.TempDir(), "sleeper.log")}
}

func TestStartStop(t *testing.T) {
	var recorded Identity
	spec := sleeper(t)
	spec.OnStart = func(id Identity) error { recorded = id; return nil }
	p, err := Start(context.Background(), spec)
	if err != nil {
		t.Fatal(err)
	}
	id := p.Identity()
	if recorded != id || !id.Alive() {
		t.Fatalf("OnStart got %+v, process %+v alive=%v", recorded, id, id.Alive())
	}
	if err := p.Stop(); err != nil {
		t.Fatal(err)
	}
	if id.Alive() {
		t.Fatal("process alive after Stop")
	}
	if err := p.Stop(); err != nil {
		t.Fatalf("second Stop: %v", err)
	}
}

func TestStartFailsWhenNeverReady(t *testing.T) {
	spec := sleeper(t)
	spec.ReadyTimeout = 300 * time.Millisecond
	var started Identity
	spec.OnStart = func(id Identity) error { started = id; return nil }
	spec.Ready = func(context.Context) error { return errors.New("port not open") }
	_, err := Start(context.Background(), spec)
	var se *StartError
	if !errors.As(err, &se) || !strings.Contains(err.Error(), "port not open") {
		t.Fatalf("want a StartError naming the readiness failure, got %v", err)
	}
	if started.Alive() {
		t.Fatal("a process that never got ready must be stopped")
	}
}

func TestStartErrorCarriesLogTail(t *testing.T) {
	spec := Spec{
		Name:    "crasher",
		Path:    "/bin/sh",
		Args:    []string{"-c", "echo 'bind: address already in use' >&2; exit 3"},
		LogPath: filepath.Join(t.TempDir(), "crasher.log"),
		Ready:   func(context.Context) error { return errors.New("not yet") },
	}
	_, err := Start(context.Background(), spec)
	if err == nil || !strings.Contains(err.Error(), "address already in use") || !strings.Contains(err.Error(), "exit status 3") {
		t.Fatalf("want exit status and log tail in error, got %v", err)
	}
}

func TestOnStartErrorStopsProcess(t *testing.T) {
	spec := sleeper(t)
	var started Identity
	spec.OnStart = func(id Identity) error { started = id; return errors.New("ledger is read-only") }
	if _, err := Start(context.Background(), spec); err == nil {
		t.Fatal("want error from OnStart")
	}
	if started.Alive() {
		t.Fatal("process must be stopped when it cannot be recorded")
	}
}

func TestStopEscalatesToSIGKILL(t *testing.T) {
	spec := Spec{
		Name:        "stubborn",
		Path:        "/bin/sh",
		Args:        []string{"-c", "trap '' TERM; echo ready; while :; do sleep 0.1; done"},
		LogPath:     filepath.Join(t.TempDir(), "stubborn.log"),
		StopTimeout: 300 * time.Millisecond,
	}
	spec.Ready = func(context.Context) error {
		raw, _ := os.ReadFile(spec.LogPath)
		if !strings.Contains(string(raw), "ready") {
			return errors.New("trap not installed yet")
		}
		return nil
	}
	p, err := Start(context.Background(), spec)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Stop(); err != nil {
		t.Fatal(err)
	}
	if p.Identity().Alive() {
		t.Fatal("process ignoring SIGTERM survived Stop")
	}
}

func TestTerminateByIdentity(t *testing.T) {
	p, err := Start(context.Background(), sleeper(t))
	if err != nil {
		t.Fatal(err)
	}
	defer p.Stop()
	id := p.Identity()

	// An identity whose start time does not match must never be signalled:
	// that PID now belongs to someone else.
	stale := id
	stale.StartTicks++
	if err := stale.Signal(syscall.SIGTERM); !errors.Is(err, ErrGone) {
		t.Fatalf("signal to a recycled PID: got %v, want ErrGone", err)
	}
	if !id.Alive() {
		t.Fatal("mismatched identity signalled the real process")
	}
	if err := Terminate(context.Background(), id, 5*time.Second); err != nil {
		t.Fatal(err)
	}
	<-p.Exited()
	if err := Terminate(context.Background(), id, time.Second); err != nil {
		t.Fatalf("Terminate of a gone process: %v", err)
	}
}

func TestParseStat(t *testing.T) {
	// A command name with spaces and a parenthesis must not shift fields.
	raw := "4242 (we ird) name) S 1 4242 4242 0 -1 4194560 100 0 0 0 1 2 0 0 20 0 1 0 987654 1000 10"
	st, err := parseStat(raw)
	if err != nil {
		t.Fatal(err)
	}
	if st.state != 'S' || st.startTicks != 987654 {
		t.Fatalf("parsed %+v", st)
	}
	if _, err := parseStat("garbage"); err == nil {
		t.Fatal("want error for malformed stat")
	}
}

func TestArgv0IsTheProgramNameTheProcessSees(t *testing.T) {
	log := filepath.Join(t.TempDir(), "named.log")
	spec := Spec{
		Name: "named", Path: "/bin/bash", Argv0: "machine-controller-manager",
		Args:    []string{"-c", `tr '\0' ' ' < /proc/$$/cmdline; echo; sleep 300`},
		LogPath: log,
		Ready: func(context.Context) error {
			out, err := os.ReadFile(log)
			if err != nil || !strings.Contains(string(out), "\n") {
				return errors.New("no output yet")
			}
			return nil
		},
	}
	p, err := Start(context.Background(), spec)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Stop(); err != nil {
		t.Fatal(err)
	}
	out, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(out), "machine-controller-manager -c ") {
		t.Errorf("the process's command line is %q, want it to start with its Argv0", out)
	}
}
