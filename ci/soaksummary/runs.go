package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/paritylab/paritylab/results"
)

// runFile is what soak.sh records about each run: the exit status of
// `make e2e-parity-run` (non-zero when ginkgo failed) and how long the run
// took.
const runFile = "soak-run.json"

type runRecord struct {
	ExitCode int `json:"exitCode"`
	Seconds  int `json:"seconds"`
}

// run is one run of the soak as its files tell it.
type run struct {
	name string
	// recorded: soak.sh recorded the run (soak-run.json).
	recorded bool
	exitCode int
	took     time.Duration
	// verdict is the suite's verdict.json; nil when the suite stopped
	// before it wrote one.
	verdict *results.RunVerdict
	// problem says why a file of the run could not be read.
	problem string
}

// passed: the suite succeeded and so did the parity verdict.
func (r run) passed() bool {
	return r.problem == "" && r.exitCode == 0 && r.verdict != nil && r.verdict.Verdict == "PASS"
}

// loadRuns reads run-1 to run-n of dir. A missing or broken file is
// recorded on the run rather than stopping the summary: the other runs
// still count.
func loadRuns(dir string, n int) []run {
	runs := make([]run, 0, n)
	for i := 1; i <= n; i++ {
		runs = append(runs, loadRun(filepath.Join(dir, fmt.Sprintf("run-%d", i))))
	}
	return runs
}

func loadRun(dir string) run {
	r := run{name: filepath.Base(dir)}
	var rec runRecord
	if err := readJSON(filepath.Join(dir, runFile), &rec); err != nil {
		r.problem = err.Error()
		return r
	}
	r.recorded, r.exitCode, r.took = true, rec.ExitCode, time.Duration(rec.Seconds)*time.Second
	var v results.RunVerdict
	switch err := readJSON(filepath.Join(dir, results.VerdictFile), &v); {
	case errors.Is(err, os.ErrNotExist):
	case err != nil:
		r.problem = err.Error()
	default:
		r.verdict = &v
	}
	return r
}

func readJSON(path string, into any) error {
	raw, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(raw, into); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}
