package lab

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/paritylab/paritylab/lab/mapi"
	"github.com/paritylab/paritylab/providers/capoa"
)

// What the lab records it runs names the module versions it links, also
// from a test binary (which carries no dependency information), and is read
// back as written.
func TestComponentRecordsNameLinkedVersions(t *testing.T) {
	records := hubComponentRecords("local", "")
	byName := map[string]ComponentRecord{}
	for _, r := range records {
		byName[r.Name] = r
	}
	for _, name := range []string{"capi-core", "machine-api"} {
		if v := byName[name].Version; !strings.HasPrefix(v, "v") {
			t.Errorf("%s version %q, want the module version from go.mod", name, v)
		}
	}
	if !strings.HasPrefix(byName["hub"].Implementation, "local (") {
		t.Errorf("hub %q does not name the hub backend", byName["hub"].Implementation)
	}
	for name, p := range map[string]capoa.Provider{"control-plane": capoa.ControlPlane, "bootstrap": capoa.Bootstrap} {
		for _, id := range capoa.IDs(p) {
			if !strings.Contains(byName[name].Implementation, id) {
				t.Errorf("%s %q does not name its departure from CAPOA %s", name, byName[name].Implementation, id)
			}
		}
	}
	dir := t.TempDir()
	if err := writeComponents(dir, records); err != nil {
		t.Fatal(err)
	}
	back, err := ReadComponents(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(back) != len(records) || back[0].Name != "assisted" {
		t.Errorf("read back %+v", back)
	}
}

// The record of the machine controller names the in-process port, or the
// upstream binary by its build information (a Go binary: the go command
// here) and its path; a binary without build information by its file.
func TestMachineControllerRecordNamesWhatRan(t *testing.T) {
	if r := machineControllerRecord(""); r.Name != "mapi-actuator" || r.Implementation != mapi.InProcessMachineController {
		t.Errorf("in-process record %+v", r)
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Fatal(err)
	}
	goBin, _ = filepath.EvalSymlinks(goBin)
	if r := machineControllerRecord(goBin); !strings.HasPrefix(r.Implementation, "cmd/go (binary "+goBin+")") || r.Version == "" {
		t.Errorf("record of a Go binary %+v; want its main package, path and a version", r)
	}
	script := filepath.Join(t.TempDir(), "manager")
	if err := os.WriteFile(script, []byte("#!/bin/sh\n"), 0o700); err != nil {
		t.Fatal(err)
	}
	if r := machineControllerRecord(script); r.Implementation != "machine controller binary manager (binary "+script+")" || r.Version != "unknown" {
		t.Errorf("record of a script %+v", r)
	}
}
