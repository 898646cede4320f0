package scenarios

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sync"

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
