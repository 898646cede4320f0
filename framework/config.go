package framework

import (
	"fmt"
	"os"
	"path/filepath"
	"time"

	"sigs.k8s.io/cluster-api/test/framework/clusterctl"
	"sigs.k8s.io/yaml"
)

// Config is an e2e config file in the CAPI test framework's format. Only
// intervals and variables mean something to the lab; providers and images
// are for profiles that install components with clusterctl (kind).
type Config struct {
	*clusterctl.E2EConfig
	// Path is the file the config was read from.
	Path string
}

// LoadConfig reads and checks an e2e config. It does not use
// clusterctl.LoadE2EConfig: that one insists on the kubeadm bootstrap and
// control-plane providers, which a lab of OpenShift's agent providers
// does not have.
func LoadConfig(path string) (*Config, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read e2e config: %w", err)
	}
	cfg := &clusterctl.E2EConfig{}
	if err := yaml.UnmarshalStrict(raw, cfg); err != nil {
		return nil, fmt.Errorf("parse e2e config %s: %w", path, err)
	}
	cfg.Defaults()
	cfg.AbsPaths(filepath.Dir(path))
	if err := checkIntervals(cfg.Intervals); err != nil {
		return nil, fmt.Errorf("e2e config %s: %w", path, err)
	}
	return &Config{E2EConfig: cfg, Path: path}, nil
}

// checkIntervals applies the CAPI framework's rule: one or two Go
// durations (timeout, polling interval) per key.
func checkIntervals(intervals map[string][]string) error {
	for key, values := range intervals {
		if len(values) == 0 || len(values) > 2 {
			return fmt.Errorf("intervals[%s] must be [timeout] or [timeout, polling], got %q", key, values)
		}
		for _, v := range values {
			if _, err := time.ParseDuration(v); err != nil {
				return fmt.Errorf("intervals[%s]: %q is not a duration (e.g. 5m, 2s)", key, v)
			}
		}
	}
	return nil
}

// Interval is a timeout and a polling interval, for gomega's Eventually.
type Interval struct {
	Timeout, Polling time.Duration
}

// Args returns the interval as Eventually's optional arguments:
// Eventually(f, iv.Args()...).
func (iv Interval) Args() []any { return []any{iv.Timeout, iv.Polling} }

// Interval returns the interval spec/key, else default/key, as the CAPI
// framework resolves them; the polling interval defaults to 10s there too.
// A key missing from the file is an error that names the file.
func (c *Config) Interval(spec, key string) (Interval, error) {
	values, ok := c.Intervals[spec+"/"+key]
	if !ok {
		values, ok = c.Intervals["default/"+key]
	}
	if !ok {
		return Interval{}, fmt.Errorf("e2e config %s has no interval %s/%s or default/%s", c.Path, spec, key, key)
	}
	iv := Interval{Polling: 10 * time.Second}
	iv.Timeout, _ = time.ParseDuration(values[0])
	if len(values) == 2 {
		iv.Polling, _ = time.ParseDuration(values[1])
	}
	return iv, nil
}

// Variable returns a variable of the file, or def when it is not set.
// Environment variables override file values, as in the CAPI framework.
func (c *Config) Variable(name, def string) string {
	if v, ok := os.LookupEnv(name); ok {
		return v
	}
	if v, ok := c.Variables[name]; ok {
		return v
	}
	return def
}
