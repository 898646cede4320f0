package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/paritylab/paritylab/results"
)

func TestReportWritesAllOutputs(t *testing.T) {
	dir := t.TempDir()
	for _, f := range []string{day1MAPI, day1CAPI} {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, filepath.Base(f)), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	out, err := runCLI(t, "report", dir)
	if err != nil {
		t.Fatalf("report: %v\n%s", err, out)
	}
	for _, name := range []string{results.JUnitFile, results.HTMLFile, results.MarkdownFile} {
		if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
			t.Errorf("%s not written: %v", name, err)
		}
		if !strings.Contains(out, "wrote "+filepath.Join(dir, name)) {
			t.Errorf("output does not say it wrote %s:\n%s", name, out)
		}
	}
	// A second run over the same directory skips the reports it wrote.
	if out, err := runCLI(t, "report", dir); err != nil {
		t.Fatalf("second report: %v\n%s", err, out)
	}
}

func TestReportOutDirAndFailures(t *testing.T) {
	out := t.TempDir()
	junit := filepath.Join(t.TempDir(), "custom.xml")
	stdout, err := runCLI(t, "report", "../../results/testdata/acceptance", "--out-dir", out, "--junit", junit)
	if err == nil || !strings.Contains(err.Error(), "regression") {
		t.Fatalf("want failure for the scale-sample regression: %v\n%s", err, stdout)
	}
	for _, f := range []string{junit, filepath.Join(out, results.HTMLFile), filepath.Join(out, results.MarkdownFile)} {
		if _, err := os.Stat(f); err != nil {
			t.Errorf("%s not written: %v", f, err)
		}
	}
	if _, err := runCLI(t, "report", t.TempDir()); err == nil || !strings.Contains(err.Error(), "no observation") {
		t.Errorf("empty dir: %v", err)
	}
}
