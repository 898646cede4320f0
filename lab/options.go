package lab

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/go-logr/logr"

	"github.com/paritylab/paritylab/lab/machines"
)

// Profiles.
const (
	ProfileLocal = "local"
	ProfileKind  = "kind"
)

// Options configure a lab run. StateDir is required.
type Options struct {
	// StateDir holds the run's ledger, lock, hub data and (by default)
	// logs. Down removes it.
	StateDir string
	// LogDir receives component logs; default StateDir/logs (removed by
	// Down). Point it elsewhere (e.g. $ARTIFACTS) to keep logs.
	LogDir string
	// Profile selects backends: "local" (default) or "kind".
	Profile string
	// Progress receives step progress for people. Default: none.
	Progress Progress
	// Logger receives the lab's own structured log. Default: a JSON log
	// file lab.log in LogDir.
	Logger logr.Logger
	// Hosts is how many virtual bare-metal hosts (libvirt domains behind
	// Redfish BMCs, each with a BareMetalHost) to create. Default 0.
	Hosts int
	// Host sizes every host; its Name is set per host (host-0, host-1...).
	Host machines.HostSpec
	// HostSizes overrides Host for the hosts at these indexes (0 to
	// Hosts-1): a bigger server racked for one role, e.g. the 8 cores
	// assisted-service requires of a single-node control plane.
	HostSizes map[int]machines.HostSpec
	// HostsNamespace holds the BareMetalHosts and their BMC credentials
	// Secrets on the hub. Default "lab-hosts".
	HostsNamespace string
	// Accel forces "kvm" or "tcg"; empty probes (and caches the outcome).
	Accel string
}

func (o *Options) defaults() error {
	if o.StateDir == "" {
		return errors.New("lab: StateDir is required")
	}
	abs, err := filepath.Abs(o.StateDir)
	if err != nil {
		return fmt.Errorf("lab: state dir: %w", err)
	}
	o.StateDir = abs
	if o.LogDir == "" {
		o.LogDir = filepath.Join(o.StateDir, "logs")
	}
	if o.Profile == "" {
		o.Profile = ProfileLocal
	}
	if o.Profile != ProfileLocal && o.Profile != ProfileKind {
		return fmt.Errorf("lab: unknown profile %q (want %q or %q)", o.Profile, ProfileLocal, ProfileKind)
	}
	if o.Progress == nil {
		o.Progress = discardProgress{}
	}
	if o.Hosts < 0 {
		return fmt.Errorf("lab: Hosts %d is negative", o.Hosts)
	}
	for i := range o.HostSizes {
		if i < 0 || i >= o.Hosts {
			return fmt.Errorf("lab: HostSizes names host %d, but the lab has hosts 0 to %d", i, o.Hosts-1)
		}
	}
	if o.HostsNamespace == "" {
		o.HostsNamespace = "lab-hosts"
	}
	if o.Accel != "" && o.Accel != string(machines.AccelKVM) && o.Accel != string(machines.AccelTCG) {
		return fmt.Errorf("lab: unknown accel %q (want %q, %q or empty to probe)", o.Accel, machines.AccelKVM, machines.AccelTCG)
	}
	return nil
}

// DefaultStateDir is ${XDG_STATE_HOME:-$HOME/.local/state}/paritylab/<name>.
func DefaultStateDir(name string) (string, error) {
	base := os.Getenv("XDG_STATE_HOME")
	if base == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return "", fmt.Errorf("find state dir: %w", err)
		}
		base = filepath.Join(home, ".local", "state")
	}
	return filepath.Join(base, "paritylab", name), nil
}

// paths inside the state dir.
func ledgerPath(stateDir string) string { return filepath.Join(stateDir, "ledger.json") }
func lockPath(stateDir string) string   { return filepath.Join(stateDir, "lock") }
