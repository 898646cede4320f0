package lab

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/paritylab/paritylab/lab/machines"
)

func TestOptionsDefaults(t *testing.T) {
	cwd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name        string
		in          Options
		wantErr     []string
		wantState   string
		wantLogDir  string
		wantProfile string
	}{
		{
			name:    "missing state dir",
			in:      Options{},
			wantErr: []string{"StateDir is required"},
		},
		{
			name:    "host size for a host the lab does not have",
			in:      Options{StateDir: "/s", Hosts: 2, HostSizes: map[int]machines.HostSpec{2: {VCPUs: 8}}},
			wantErr: []string{"HostSizes names host 2", "hosts 0 to 1"},
		},
		{
			name:    "unknown profile",
			in:      Options{StateDir: "/s", Profile: "vagrant"},
			wantErr: []string{`"vagrant"`, `"local"`, `"kind"`},
		},
		{
			name:        "absolute state dir, defaults",
			in:          Options{StateDir: "/var/lib/lab"},
			wantState:   "/var/lib/lab",
			wantLogDir:  "/var/lib/lab/logs",
			wantProfile: ProfileLocal,
		},
		{
			name:        "relative state dir",
			in:          Options{StateDir: "rel/state", Profile: ProfileLocal},
			wantState:   filepath.Join(cwd, "rel", "state"),
			wantLogDir:  filepath.Join(cwd, "rel", "state", "logs"),
			wantProfile: ProfileLocal,
		},
		{
			name:        "explicit log dir kept",
			in:          Options{StateDir: "/s/../s2", LogDir: "/artifacts"},
			wantState:   "/s2",
			wantLogDir:  "/artifacts",
			wantProfile: ProfileLocal,
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			o := c.in
			err := o.defaults()
			if len(c.wantErr) > 0 {
				if err == nil {
					t.Fatalf("defaults() = nil, want an error")
				}
				for _, w := range c.wantErr {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("error %q does not contain %s", err, w)
					}
				}
				return
			}
			if err != nil {
				t.Fatalf("defaults(): %v", err)
			}
			if o.StateDir != c.wantState || o.LogDir != c.wantLogDir || o.Profile != c.wantProfile {
				t.Errorf("defaults() = state %q, logs %q, profile %q; want %q, %q, %q",
					o.StateDir, o.LogDir, o.Profile, c.wantState, c.wantLogDir, c.wantProfile)
			}
			if o.Progress == nil {
				t.Error("defaults() left Progress nil")
			}
		})
	}
}

// TestOptionsValidate covers what `paritylab lab up` checks before it
// detaches a supervisor: every problem is reported, not only the first.
func TestOptionsValidate(t *testing.T) {
	cases := []struct {
		name    string
		in      Options
		wantErr []string // empty: valid
	}{
		{name: "zero but the state dir", in: Options{StateDir: "s"}},
		{name: "forced accel and sized hosts", in: Options{StateDir: "s", Profile: ProfileLocal, Hosts: 2, Accel: "tcg", HostSizes: map[int]machines.HostSpec{1: {VCPUs: 8}}}},
		{name: "kind", in: Options{StateDir: "s", Profile: ProfileKind}, wantErr: []string{"profile kind", "not implemented"}},
		{name: "negative hosts", in: Options{StateDir: "s", Hosts: -1}, wantErr: []string{"-1 hosts", "cannot be negative"}},
		{name: "unknown accel", in: Options{StateDir: "s", Accel: "hvf"}, wantErr: []string{`unknown accel "hvf"`, `"kvm"`, `"tcg"`}},
		{name: "machine controller binary", in: Options{StateDir: "s", MachineController: "/bin/true"}},
		{name: "missing machine controller", in: Options{StateDir: "s", MachineController: "/nonexistent/manager"}, wantErr: []string{"machine controller binary", "/nonexistent/manager", "no such file"}},
		{name: "machine controller not executable", in: Options{StateDir: "s", MachineController: "/etc/passwd"}, wantErr: []string{"/etc/passwd is not an executable file"}},
		{
			name:    "everything wrong at once",
			in:      Options{Profile: "vagrant", Hosts: -2, Accel: "xen", HostSizes: map[int]machines.HostSpec{3: {}}},
			wantErr: []string{"StateDir is required", `unknown profile "vagrant"`, "-2 hosts", "HostSizes names host 3", `unknown accel "xen"`},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := c.in.Validate()
			if len(c.wantErr) == 0 {
				if err != nil {
					t.Fatalf("Validate() = %v, want nil", err)
				}
				return
			}
			if err == nil {
				t.Fatal("Validate() = nil, want an error")
			}
			for _, w := range c.wantErr {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %s", err, w)
				}
			}
		})
	}
	if err := (Options{StateDir: "s", Profile: ProfileKind}).Validate(); !errors.Is(err, errKindProfile) {
		t.Errorf("kind: Validate() = %v, want errKindProfile", err)
	}
}

func TestDefaultStateDir(t *testing.T) {
	t.Setenv("XDG_STATE_HOME", "/xdg/state")
	got, err := DefaultStateDir("ci")
	if err != nil || got != "/xdg/state/paritylab/ci" {
		t.Fatalf("DefaultStateDir with XDG_STATE_HOME = %q, %v", got, err)
	}

	home := t.TempDir()
	t.Setenv("XDG_STATE_HOME", "")
	t.Setenv("HOME", home)
	got, err = DefaultStateDir("default")
	if want := filepath.Join(home, ".local", "state", "paritylab", "default"); err != nil || got != want {
		t.Fatalf("DefaultStateDir without XDG_STATE_HOME = %q, %v; want %q", got, err, want)
	}
}

func TestAcquireLock(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "state")
	first, err := acquireLock(dir)
	if err != nil {
		t.Fatalf("first acquireLock: %v", err)
	}
	defer first.release()
	if _, err := os.Stat(lockPath(dir)); err != nil {
		t.Fatalf("lock file missing: %v", err)
	}

	second, err := acquireLock(dir)
	if !errors.Is(err, errLocked) {
		second.release()
		t.Fatalf("second acquireLock = %v, want errLocked", err)
	}

	first.release()
	first.release() // safe twice
	third, err := acquireLock(dir)
	if err != nil {
		t.Fatalf("acquireLock after release: %v", err)
	}
	third.release()
	var nilLock *lock
	nilLock.release() // safe on nil
}

func TestUpKindProfileNotImplemented(t *testing.T) {
	parent := t.TempDir()
	stateDir := filepath.Join(parent, "state")
	l, err := Up(context.Background(), Options{StateDir: stateDir, Profile: ProfileKind})
	if !errors.Is(err, errKindProfile) {
		t.Fatalf("Up(kind) = %v, %v; want errKindProfile", l, err)
	}
	if l != nil {
		t.Error("Up(kind) returned a lab")
	}
	if !strings.Contains(err.Error(), "not implemented") {
		t.Errorf("error %q does not say it is not implemented", err)
	}
	if _, err := os.Stat(stateDir); !os.IsNotExist(err) {
		t.Fatalf("Up(kind) created the state dir (stat: %v)", err)
	}
	entries, err := os.ReadDir(parent)
	if err != nil || len(entries) != 0 {
		t.Fatalf("Up(kind) left %v (%v) behind", entries, err)
	}
}

func TestUpInvalidOptionsCreateNothing(t *testing.T) {
	parent := t.TempDir()
	stateDir := filepath.Join(parent, "state")
	for _, opts := range []Options{{}, {StateDir: stateDir, Profile: "bogus"}} {
		if l, err := Up(context.Background(), opts); err == nil || l != nil {
			t.Errorf("Up(%+v) = %v, %v; want an error", opts, l, err)
		}
	}
	if _, err := os.Stat(stateDir); !os.IsNotExist(err) {
		t.Fatalf("Up with invalid options created the state dir (stat: %v)", err)
	}
}
