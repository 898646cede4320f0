package scenarios

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/paritylab/paritylab/framework"
	"github.com/paritylab/paritylab/results"
)

// The diffs' duration tolerance comes from the e2e config; a value out of
// range is an error naming the variable, never replaced by the default.
func TestComparisonOptionsFromTheE2EConfig(t *testing.T) {
	for _, tc := range []struct {
		name, vars string
		ratio      float64
		slack      time.Duration
		err        string
	}{
		{name: "unset takes the defaults", ratio: results.DefaultDurationRatio, slack: results.DefaultDurationSlack},
		{name: "strict", vars: "PARITY_DURATION_RATIO: \"1\"\n  PARITY_DURATION_SLACK: \"0s\"", ratio: 1, slack: 0},
		{name: "loose", vars: "PARITY_DURATION_RATIO: \"2.5\"\n  PARITY_DURATION_SLACK: \"1m\"", ratio: 2.5, slack: time.Minute},
		{name: "ratio below one", vars: "PARITY_DURATION_RATIO: \"0.9\"", err: "PARITY_DURATION_RATIO"},
		{name: "negative slack", vars: "PARITY_DURATION_SLACK: \"-1s\"", err: "PARITY_DURATION_SLACK"},
		{name: "not a number", vars: "PARITY_DURATION_RATIO: \"fast\"", err: `PARITY_DURATION_RATIO "fast" is not a number`},
		{name: "not a duration", vars: "PARITY_DURATION_SLACK: \"30\"", err: `PARITY_DURATION_SLACK "30" is not a duration`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := writeConfig(t, tc.vars)
			opts, err := ComparisonOptions(cfg)
			switch {
			case tc.err != "":
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err = %v, want one naming %s", err, tc.err)
				}
			case err != nil:
				t.Fatal(err)
			case opts.DurationRatio != tc.ratio || opts.DurationSlack != tc.slack:
				t.Fatalf("options %+v, want ratio %v slack %v", opts, tc.ratio, tc.slack)
			}
		})
	}
}

func writeConfig(t *testing.T, vars string) *framework.Config {
	t.Helper()
	doc := "managementClusterName: test\nintervals:\n  default/wait-object: [\"1m\", \"1s\"]\n"
	if vars != "" {
		doc += "variables:\n  " + vars + "\n"
	}
	path := filepath.Join(t.TempDir(), "e2e.yaml")
	if err := os.WriteFile(path, []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := framework.LoadConfig(path)
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}
