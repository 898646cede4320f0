package scenarios

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"github.com/paritylab/paritylab/framework"
	"github.com/paritylab/paritylab/results"
)

// Input is what a scenario needs from its suite.
type Input struct {
	Lab    *framework.Lab
	Hosts  *framework.HostPool
	Config *framework.Config
	// ArtifactsDir receives observations and, when a spec fails, dumps.
	ArtifactsDir string
	// Observations collects what every flow saw, for the suite's report.
	Observations *Observations
	// Registry explains known differences in the diffs.
	Registry *results.Registry
	// Options are how the diffs compare: the duration tolerance of the e2e
	// config (ComparisonOptions).
	Options results.Options
	// Clusters are the clusters flows installed, for later scenarios.
	Clusters *Clusters
	// CAPI serves the CAPI flows' release and discovery image.
	CAPI *CAPIServers
	// SSHKey is the public key every cluster of both flows gets.
	SSHKey string
}

// Observations collects the observations of a suite run.
type Observations struct {
	mu   sync.Mutex
	list []*results.Observation
}

// Add keeps an observation and writes it to
// <dir>/observations/<scenario>.<flow>.json, the input of `paritylab
// diff` and `paritylab report`.
func (o *Observations) Add(dir string, obs *results.Observation) error {
	o.mu.Lock()
	o.list = append(o.list, obs)
	o.mu.Unlock()
	raw, err := json.MarshalIndent(obs, "", "  ")
	if err != nil {
		return fmt.Errorf("encode observation %s/%s: %w", obs.Scenario, obs.Flow, err)
	}
	path := filepath.Join(dir, "observations", fmt.Sprintf("%s.%s.json", obs.Scenario, obs.Flow))
	if err := os.MkdirAll(filepath.Dir(path), 0o750); err != nil {
		return err
	}
	return os.WriteFile(path, raw, 0o640)
}

// Get returns the observation of a scenario's flow, or nil.
func (o *Observations) Get(scenario string, flow results.Flow) *results.Observation {
	o.mu.Lock()
	defer o.mu.Unlock()
	for _, obs := range o.list {
		if obs.Scenario == scenario && obs.Flow == flow {
			return obs
		}
	}
	return nil
}

// All returns every observation collected.
func (o *Observations) All() []*results.Observation {
	o.mu.Lock()
	defer o.mu.Unlock()
	return append([]*results.Observation(nil), o.list...)
}

// ComparisonOptions are the diffs' options from the e2e config:
// PARITY_DURATION_RATIO (>= 1) and PARITY_DURATION_SLACK (a duration,
// >= 0). A value out of range, or not a number or duration, is an error
// that names the variable; an unset variable takes the default.
func ComparisonOptions(cfg *framework.Config) (results.Options, error) {
	opts := results.DefaultOptions()
	if v := cfg.Variable("PARITY_DURATION_RATIO", ""); v != "" {
		r, err := strconv.ParseFloat(v, 64)
		if err != nil {
			return opts, fmt.Errorf("e2e config %s: PARITY_DURATION_RATIO %q is not a number", cfg.Path, v)
		}
		opts.DurationRatio = r
	}
	if v := cfg.Variable("PARITY_DURATION_SLACK", ""); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil {
			return opts, fmt.Errorf("e2e config %s: PARITY_DURATION_SLACK %q is not a duration (e.g. 30s)", cfg.Path, v)
		}
		opts.DurationSlack = d
	}
	if err := opts.Validate(); err != nil {
		return opts, fmt.Errorf("e2e config %s: PARITY_DURATION_RATIO/PARITY_DURATION_SLACK: %w", cfg.Path, err)
	}
	return opts, nil
}
