package framework

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func writeConfig(t *testing.T, body string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "e2e.yaml")
	if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestTheLocalProfileConfigLoads(t *testing.T) {
	cfg, err := LoadConfig("../ci/e2e/local.yaml")
	if err != nil {
		t.Fatal(err)
	}
	iv, err := cfg.Interval("day1", "wait-install")
	if err != nil {
		t.Fatal(err)
	}
	if iv.Timeout <= 0 || iv.Polling <= 0 {
		t.Fatalf("wait-install interval = %+v", iv)
	}
	if cfg.Variable("OPENSHIFT_VERSION", "") == "" {
		t.Fatal("OPENSHIFT_VERSION missing from the local profile")
	}
}

func TestIntervalsResolveAsInTheCAPIFramework(t *testing.T) {
	cfg, err := LoadConfig(writeConfig(t, `
managementClusterName: t
intervals:
  default/wait: ["5m", "2s"]
  day1/wait: ["9m"]
`))
	if err != nil {
		t.Fatal(err)
	}
	got, _ := cfg.Interval("day1", "wait")
	if got != (Interval{Timeout: 9 * time.Minute, Polling: 10 * time.Second}) {
		t.Fatalf("day1/wait = %+v, want the scenario's timeout and the 10s default polling", got)
	}
	got, _ = cfg.Interval("day2-scale", "wait")
	if got != (Interval{Timeout: 5 * time.Minute, Polling: 2 * time.Second}) {
		t.Fatalf("day2-scale/wait = %+v, want default/wait", got)
	}
	if _, err := cfg.Interval("day1", "missing"); err == nil || !strings.Contains(err.Error(), "default/missing") {
		t.Fatalf("a missing interval must name what is missing, got %v", err)
	}
}

func TestBadConfigsSayWhatToFix(t *testing.T) {
	for name, tc := range map[string]struct{ body, want string }{
		"not a duration": {"intervals:\n  default/wait: [\"five minutes\"]\n", `"five minutes" is not a duration`},
		"three values":   {"intervals:\n  default/wait: [\"1m\", \"1s\", \"2s\"]\n", "must be [timeout] or [timeout, polling]"},
		"unknown field":  {"intervalz: {}\n", "intervalz"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := LoadConfig(writeConfig(t, tc.body))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want an error containing %q", err, tc.want)
			}
		})
	}
}

func TestVariablesTakeTheEnvironmentFirst(t *testing.T) {
	cfg, err := LoadConfig(writeConfig(t, "variables:\n  PARITYLAB_TEST_VAR: file\n"))
	if err != nil {
		t.Fatal(err)
	}
	if v := cfg.Variable("PARITYLAB_TEST_VAR", "def"); v != "file" {
		t.Fatalf("got %q, want the file's value", v)
	}
	t.Setenv("PARITYLAB_TEST_VAR", "env")
	if v := cfg.Variable("PARITYLAB_TEST_VAR", "def"); v != "env" {
		t.Fatalf("got %q, want the environment's value", v)
	}
	if v := cfg.Variable("PARITYLAB_UNSET_VAR", "def"); v != "def" {
		t.Fatalf("got %q, want the default", v)
	}
}
