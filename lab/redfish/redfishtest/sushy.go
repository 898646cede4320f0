package redfishtest

import (
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Python is the interpreter that has python3-sushy: Debian's, not whatever
// python3 comes first on PATH.
const Python = "/usr/bin/python3"

//go:embed testdata/sushy_conformance.py
var sushyScript []byte

// RunSushyConformance drives the target with python3-sushy: it reads the
// system's processors and storage as Ironic's redfish inspection does
// (checked against target.Hardware when set), walks Ironic's
// virtual-media boot sequence (eject, insert, boot Cd once, power
// on, poll, power off, eject, boot Hdd continuous), then sends bad
// requests (unknown ResetType, unsupported PATCH property, malformed JSON,
// unknown system, no and wrong credentials, non-loopback image) and checks
// their status and Redfish error body, and the name-to-ID redirect.
func RunSushyConformance(t testing.TB, target Target) {
	t.Helper()
	target = target.withDefaults(t)
	requireSushy(t)
	script := filepath.Join(t.TempDir(), "sushy_conformance.py")
	if err := os.WriteFile(script, sushyScript, 0o600); err != nil {
		t.Fatalf("write conformance script: %v", err)
	}
	input, err := json.Marshal(map[string]any{
		"url": target.URL, "system_id": target.SystemID, "user": target.User,
		"password": target.Password, "image_url": target.ImageURL, "ca_file": target.CAFile,
		"hardware": sushyHardware(target.Hardware),
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, Python, script)
	cmd.Stdin = bytes.NewReader(input)
	cmd.Env = append(os.Environ(), "PYTHONDONTWRITEBYTECODE=1", "NO_PROXY=127.0.0.1,localhost,::1", "no_proxy=127.0.0.1,localhost,::1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("sushy conformance against %s failed: %v\n%s", target.URL, err, out)
	}
	if !strings.Contains(string(out), "PASS:") {
		t.Fatalf("sushy conformance script ended without PASS:\n%s", out)
	}
	t.Logf("sushy conformance:\n%s", out)
}

// sushyHardware is Hardware as the script reads it; nil when not set.
func sushyHardware(h *Hardware) map[string]any {
	if h == nil {
		return nil
	}
	return map[string]any{"instruction_set": h.InstructionSet, "disk_bytes": h.DiskBytes}
}

// requireSushy fails the test, with what to install, when python3-sushy is
// missing: a skipped conformance test would prove nothing.
func requireSushy(t testing.TB) {
	t.Helper()
	out, err := exec.Command(Python, "-c", "import sushy").CombinedOutput()
	if err != nil {
		t.Fatalf("python3-sushy is not importable by %s (apt-get install python3-sushy; see ci/apt-packages.txt): %v\n%s", Python, err, out)
	}
}
