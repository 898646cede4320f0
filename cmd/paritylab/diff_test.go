package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/paritylab/paritylab/results"
)

// Example observations of the results package: a made-up pair, and the
// day1 pair of a real run.
const (
	sampleMAPI = "../../results/testdata/acceptance/scale-sample.mapi.json"
	sampleCAPI = "../../results/testdata/acceptance/scale-sample.capi.json"
	day1MAPI   = "../../results/testdata/real/day1.mapi.json"
	day1CAPI   = "../../results/testdata/real/day1.capi.json"
)

// asScenario copies an observation under another scenario's name: the
// made-up pair is a day2-scale pair, whose known divergences the built-in
// registry scopes to the real scenarios.
func asScenario(t *testing.T, path, scenario string) string {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	renamed := strings.Replace(string(raw), `"scenario": "scale-sample"`, `"scenario": "`+scenario+`"`, 1)
	if renamed == string(raw) {
		t.Fatalf("%s names no scale-sample scenario", path)
	}
	out := filepath.Join(t.TempDir(), scenario+"."+filepath.Base(path))
	if err := os.WriteFile(out, []byte(renamed), 0o600); err != nil {
		t.Fatal(err)
	}
	return out
}

func TestDiffFailsOnRegressionAndWritesReports(t *testing.T) {
	dir := t.TempDir()
	junit, html, md := filepath.Join(dir, "j.xml"), filepath.Join(dir, "out", "r.html"), filepath.Join(dir, "r.md")
	// Arguments in either order: the flows come from the files.
	out, err := runCLI(t, "diff", asScenario(t, sampleCAPI, "day2-scale"), asScenario(t, sampleMAPI, "day2-scale"),
		"--junit", junit, "--html", html, "--markdown", md, "--allow-stale")
	if err == nil || !strings.Contains(err.Error(), "1 regression(s)") {
		t.Fatalf("want a failing diff, got %v\n%s", err, out)
	}
	for _, want := range []string{"FAIL:", "REGRESSION  nodes/taints", "known       nodes/providerID", "providerid-format", "node.kubernetes.io/unschedulable:NoSchedule"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	for _, f := range []string{junit, html, md} {
		if fi, err := os.Stat(f); err != nil || fi.Size() == 0 {
			t.Errorf("%s not written: %v", f, err)
		}
	}
}

func TestDiffPassesOnKnownDivergencesOnly(t *testing.T) {
	out, err := runCLI(t, "diff", day1MAPI, day1CAPI)
	if err != nil {
		t.Fatalf("the real run's day1 pair should pass against the built-in registry: %v\n%s", err, out)
	}
	if !strings.HasPrefix(out, "PASS:") {
		t.Fatalf("got %s", out)
	}
	// In the real run the flows' phases differ by seconds (nodes-ready
	// by about 7 s) once MAPI's image cooldown is taken off: within the
	// default tolerance (1.5× or ±30s), not a tighter one.
	out, err = runCLI(t, "diff", day1MAPI, day1CAPI, "--duration-ratio", "1.05", "--duration-slack", "1s")
	if err == nil || !strings.Contains(out, "REGRESSION  durations/nodes-ready") {
		t.Fatalf("tight duration tolerance: %v\n%s", err, out)
	}
}

func TestDiffStaleEntryFailsUnlessAllowed(t *testing.T) {
	// The built-in registry plus an entry that no longer reproduces.
	builtin, err := os.ReadFile("../../results/known-divergences.yaml")
	if err != nil {
		t.Fatal(err)
	}
	reg := filepath.Join(t.TempDir(), "registry.yaml")
	stale := `
- id: roles-differ
  summary: node roles differ
  aspect: nodes/roles
  mapi: ['worker']
  explanation: they used to
  catalogue: none
  upstream: [{url: "https://example.invalid"}]
`
	if err := os.WriteFile(reg, append(builtin, stale...), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := runCLI(t, "diff", day1MAPI, day1CAPI, "--registry", reg)
	if err == nil || !strings.Contains(err.Error(), "0 regression(s), 1 stale") || !strings.Contains(out, "STALE known divergence roles-differ") {
		t.Fatalf("want a stale failure, got %v\n%s", err, out)
	}
	out, err = runCLI(t, "diff", day1MAPI, day1CAPI, "--registry", reg, "--allow-stale")
	if err != nil || !strings.Contains(out, "STALE known divergence roles-differ") {
		t.Fatalf("--allow-stale should pass and still show the stale entry: %v\n%s", err, out)
	}
}

func TestDiffRejectsBadInput(t *testing.T) {
	dir := t.TempDir()
	future := filepath.Join(dir, "future.json")
	if err := os.WriteFile(future, []byte(`{"schemaVersion": "paritylab.io/observation/v999"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	for name, args := range map[string][]string{
		"unsupported schema": {"diff", future, day1CAPI},
		"same flow twice":    {"diff", day1MAPI, day1MAPI},
		"other scenario":     {"diff", day1MAPI, sampleCAPI},
		"missing file":       {"diff", filepath.Join(dir, "nope.json"), day1CAPI},
		"one argument":       {"diff", day1MAPI},
	} {
		if out, err := runCLI(t, args...); err == nil {
			t.Errorf("%s: accepted\n%s", name, out)
		}
	}
	_, err := runCLI(t, "diff", future, day1CAPI)
	if err == nil || !strings.Contains(err.Error(), results.SchemaVersion) {
		t.Errorf("unsupported schema error should name the supported version: %v", err)
	}
}

// TestDurationToleranceOutOfRange: a tolerance out of range is refused
// with the allowed range, by both commands, before any file is read.
func TestDurationToleranceOutOfRange(t *testing.T) {
	for _, c := range []struct {
		args []string
		want []string
	}{
		{[]string{"--duration-ratio", "0.5"}, []string{"--duration-ratio 0.5", "≥ 1"}},
		{[]string{"--duration-ratio", "NaN"}, []string{"--duration-ratio NaN", "≥ 1"}},
		{[]string{"--duration-slack", "-1s"}, []string{"--duration-slack -1s", "≥ 0"}},
		{[]string{"--duration-ratio", "0", "--duration-slack", "-5m"}, []string{"--duration-ratio 0", "--duration-slack -5m0s"}},
	} {
		for _, cmd := range [][]string{{"diff", "missing.mapi.json", "missing.capi.json"}, {"report", "missing-dir"}} {
			out, err := runCLI(t, append(cmd, c.args...)...)
			if err == nil {
				t.Errorf("%s %v accepted:\n%s", cmd[0], c.args, out)
				continue
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("%s %v: error %q lacks %q", cmd[0], c.args, err, w)
				}
			}
			if strings.Contains(err.Error(), "missing") {
				t.Errorf("%s %v: read files before checking the flags: %v", cmd[0], c.args, err)
			}
		}
	}
	// The edges of the range are allowed: a strict comparison is one a
	// user may ask for.
	out, err := runCLI(t, "diff", day1MAPI, day1CAPI, "--duration-ratio", "1", "--duration-slack", "0s")
	if err == nil || !strings.Contains(out, "REGRESSION  durations/") || !strings.Contains(out, "1.00×") {
		t.Errorf("strict tolerance: %v\n%s", err, out)
	}
}
