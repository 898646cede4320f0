package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/paritylab/paritylab/results"
)

// writeRun writes the files of one soak run as soak.sh and the suite do;
// a nil verdict is a suite that stopped before writing one.
func writeRun(t *testing.T, dir string, i, exitCode, seconds int, verdict *results.RunVerdict) {
	t.Helper()
	runDir := filepath.Join(dir, fmt.Sprintf("run-%d", i))
	if err := os.MkdirAll(runDir, 0o755); err != nil {
		t.Fatal(err)
	}
	write := func(name string, v any) {
		raw, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(runDir, name), raw, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(runFile, runRecord{ExitCode: exitCode, Seconds: seconds})
	if verdict != nil {
		write(results.VerdictFile, verdict)
	}
}

func verdict(v string, parity, known, regression int) *results.RunVerdict {
	return &results.RunVerdict{Verdict: v, Parity: parity, Known: known, Regression: regression,
		Scenarios: map[string]results.ScenarioVerdict{"day1": {Parity: parity, Known: known, Regression: regression}}}
}

func summaryOf(t *testing.T, dir string, n int) (string, summary) {
	t.Helper()
	s := summarise(loadRuns(dir, n))
	var out bytes.Buffer
	if err := s.write(&out); err != nil {
		t.Fatal(err)
	}
	t.Logf("soak summary:\n%s", out.String())
	return out.String(), s
}

func TestSoakSummaryCountsFlakes(t *testing.T) {
	dir := t.TempDir()
	writeRun(t, dir, 1, 1, 125, nil)                         // stopped early
	writeRun(t, dir, 2, 0, 2460, verdict("PASS", 41, 12, 0)) // the reference
	writeRun(t, dir, 3, 0, 2500, verdict("PASS", 41, 12, 0)) // same
	writeRun(t, dir, 4, 1, 2390, verdict("FAIL", 40, 12, 1)) // regression
	shifted := verdict("PASS", 41, 12, 0)                    // same totals, another scenario
	shifted.Scenarios = map[string]results.ScenarioVerdict{"day1": {Parity: 40, Known: 12}, "day2-scale": {Parity: 1}}
	writeRun(t, dir, 5, 0, 2470, shifted)
	// run-6 never recorded (soak interrupted)

	out, s := summaryOf(t, dir, 6)
	want := `run-1   FAIL  no verdict: the suite stopped before it wrote verdict.json  duration 2m5s  (make exit status 1)
run-2   PASS  parity 41  known 12  regression 0  duration 41m0s
run-3   PASS  parity 41  known 12  regression 0  duration 41m40s
run-4   FAIL  parity 40  known 12  regression 1  duration 39m50s  (make exit status 1)
run-5   PASS  parity 41  known 12  regression 0  duration 41m10s  (result differs from run-2)
`
	if !strings.HasPrefix(out, want) {
		t.Errorf("run lines:\n%s\nwant them to start with:\n%s", out, want)
	}
	if !strings.Contains(out, "run-6   FAIL  cannot read the run: ") {
		t.Errorf("an unrecorded run must be a failure:\n%s", out)
	}
	final := "soak: 6 run(s), 3 passed; flakes: 4 (failed, or verdict or aspect counts differ from run-2)\n"
	if !strings.HasSuffix(out, final) || s.flakes != 4 {
		t.Errorf("final line of\n%s\nwant %q (flakes %d)", out, final, s.flakes)
	}
}

func TestSoakSummaryStableRuns(t *testing.T) {
	dir := t.TempDir()
	for i := 1; i <= 3; i++ {
		writeRun(t, dir, i, 0, 2400+i, verdict("PASS", 41, 12, 0))
	}
	out, s := summaryOf(t, dir, 3)
	if s.flakes != 0 || !strings.HasSuffix(out, "soak: 3 run(s), 3 passed; flakes: 0 (failed, or verdict or aspect counts differ from run-1)\n") {
		t.Errorf("stable soak: flakes %d\n%s", s.flakes, out)
	}
}

func TestSoakSummaryNothingPassed(t *testing.T) {
	dir := t.TempDir()
	writeRun(t, dir, 1, 2, 60, nil)
	writeRun(t, dir, 2, 1, 2400, verdict("FAIL", 40, 12, 1))
	if err := os.WriteFile(filepath.Join(dir, "run-2", results.VerdictFile), []byte("{broken"), 0o644); err != nil {
		t.Fatal(err)
	}
	out, s := summaryOf(t, dir, 2)
	if s.flakes != 2 || !strings.HasSuffix(out, "soak: 2 run(s), none passed; flakes: 2\n") {
		t.Errorf("all failed: flakes %d\n%s", s.flakes, out)
	}
	if !strings.Contains(out, "run-2   FAIL  unreadable verdict  duration 40m0s  (make exit status 1; ") || !strings.Contains(out, "verdict.json: invalid character") {
		t.Errorf("a broken verdict.json must be named:\n%s", out)
	}
}
