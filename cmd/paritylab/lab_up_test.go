package main

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

// TestLabUpRefusesBadOptionsBeforeStarting runs `lab up` with options the
// lab refuses: the command must fail with the reason before it creates
// anything or starts a supervisor.
func TestLabUpRefusesBadOptionsBeforeStarting(t *testing.T) {
	cases := []struct {
		args []string
		want []string
	}{
		{[]string{"--profile", "kind"}, []string{"profile kind", "not implemented yet; use the local profile"}},
		{[]string{"--profile", "kind", "--foreground"}, []string{"profile kind", "not implemented"}},
		{[]string{"--profile", "vagrant"}, []string{`unknown profile "vagrant"`}},
		{[]string{"--accel", "hvf"}, []string{`unknown accel "hvf"`, `"kvm"`, `"tcg"`}},
		{[]string{"--hosts", "-3"}, []string{"-3 hosts", "cannot be negative"}},
		{[]string{"--hosts", "-1", "--accel", "xen"}, []string{"-1 hosts", `unknown accel "xen"`}},
		{[]string{"--machine-controller", "/nonexistent/manager"}, []string{"machine controller binary", "/nonexistent/manager"}},
	}
	for _, c := range cases {
		t.Run(strings.Join(c.args, " "), func(t *testing.T) {
			stateDir := filepath.Join(t.TempDir(), "state")
			out, err := runCLI(t, append([]string{"lab", "up", "--state-dir", stateDir}, c.args...)...)
			if err == nil {
				t.Fatalf("lab up %v succeeded:\n%s", c.args, out)
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
			if strings.Contains(out, "Bringing lab") {
				t.Errorf("lab up started before refusing:\n%s", out)
			}
			if _, err := os.Stat(stateDir); !os.IsNotExist(err) {
				t.Errorf("lab up created its state dir (stat: %v)", err)
			}
		})
	}
}

func TestSupervisorStoppedShowsThisRunsLastLines(t *testing.T) {
	path := filepath.Join(t.TempDir(), "supervisor.log")
	if err := os.WriteFile(path, []byte("error: an older run's failure\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	f, log, err := openSupervisorLog(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := []string{"panic: assignment to entry in nil map", "BMC password=hunter2", "Authorization: Basic YWRtaW46aHVudGVyMg=="}
	for i := range 25 {
		lines = append(lines, "goroutine "+strings.Repeat("x", i))
	}
	lines = append(lines, "url https://127.0.0.1:6443 token=abc.def", strings.Repeat("y", 1000), "error: lock held by pid 42")
	if _, err := f.WriteString(strings.Join(lines, "\n") + "\n"); err != nil {
		t.Fatal(err)
	}
	f.Close()

	err = log.stoppedError()
	if !errors.Is(err, errSupervisorStopped) {
		t.Fatalf("stoppedError() = %v, want errSupervisorStopped", err)
	}
	msg := err.Error()
	for _, want := range []string{"last lines of " + path, "error: lock held by pid 42", "[line withheld: it may hold a credential]", strings.Repeat("y", supervisorLineChars) + "…"} {
		if !strings.Contains(msg, want) {
			t.Errorf("message lacks %q:\n%s", want, msg)
		}
	}
	for _, leak := range []string{"older run", "abc.def", "hunter2", "panic:", strings.Repeat("y", supervisorLineChars+1)} {
		if strings.Contains(msg, leak) {
			t.Errorf("message shows %q:\n%s", leak, msg)
		}
	}
	if n := strings.Count(msg, "\n  "); n != supervisorTailLines {
		t.Errorf("message shows %d lines, want %d:\n%s", n, supervisorTailLines, msg)
	}
}

func TestSupervisorStoppedSilently(t *testing.T) {
	path := filepath.Join(t.TempDir(), "supervisor.log")
	f, log, err := openSupervisorLog(path)
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	if err := log.stoppedError(); err == nil || !strings.Contains(err.Error(), "wrote nothing to "+path) {
		t.Errorf("stoppedError() = %v", err)
	}
	os.Remove(path)
	if err := log.stoppedError(); err == nil || !strings.Contains(err.Error(), "see "+path) {
		t.Errorf("stoppedError() without a log = %v", err)
	}
}

// TestLabUpShowsWhyTheSupervisorStopped starts the test binary as a
// supervisor that dies before the lab is ready (see TestMain): `lab up`
// must fail with its last words, not only point at its log.
func TestLabUpShowsWhyTheSupervisorStopped(t *testing.T) {
	t.Setenv(fakeSupervisorEnv, "error: cannot lock the state dir: held by pid 4242\nhtpasswd password: hunter2")
	stateDir := filepath.Join(t.TempDir(), "state")
	out, err := runCLI(t, "lab", "up", "--state-dir", stateDir)
	if !errors.Is(err, errSupervisorStopped) {
		t.Fatalf("lab up = %v, want errSupervisorStopped\n%s", err, out)
	}
	for _, want := range []string{filepath.Join(stateDir, "logs", "supervisor.log"), "error: cannot lock the state dir: held by pid 4242", "[line withheld"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q:\n%v", want, err)
		}
	}
	if strings.Contains(err.Error(), "hunter2") {
		t.Errorf("error shows a secret:\n%v", err)
	}
}

// The detached supervisor gets the options `lab up` was given, hosted
// clusters included.
func TestRunOptionsReachTheSupervisor(t *testing.T) {
	for _, hosted := range []bool{false, true} {
		in := &runOptions{hosts: 2, hostedClusters: hosted}
		cmd := &cobra.Command{}
		out := &runOptions{}
		out.register(cmd)
		if err := cmd.ParseFlags(in.args()); err != nil {
			t.Fatal(err)
		}
		if got := out.labOptions("/state", nil); got.HostedClusters != hosted || got.Hosts != 2 {
			t.Errorf("hosted %v: the supervisor's lab options: hosted clusters %v, hosts %d", hosted, got.HostedClusters, got.Hosts)
		}
	}
}
