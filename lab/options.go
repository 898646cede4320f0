package lab

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"

	"github.com/go-logr/logr"

	"github.com/paritylab/paritylab/lab/machines"
	"github.com/paritylab/paritylab/lab/mapi"
	"github.com/paritylab/paritylab/lab/releases"
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
	// MachineController, when set, is the upstream bare-metal machine
	// controller binary (cmd/manager of
	// openshift/cluster-api-provider-baremetal) that every workload
	// cluster's machine API runs, as a child process, instead of the
	// lab's in-process port of its actuator and Metal3Remediation
	// controller.
	MachineController string
	// Releases are the OpenShift releases the lab's registry serves.
	// Default releases.Lab.
	Releases []releases.Release
	// HostedClusters runs the lab's HyperShift operator stand-in on the
	// hub (lab/hypershift): HostedClusters and NodePools on the agent
	// platform, each hosted control plane a local one in the lab's ledger.
	// Off by default: only the HyperShift flows use it.
	HostedClusters bool
}

// Validate reports every option a lab cannot start with, without touching
// the machine. Up calls it; so does `paritylab lab up` before it detaches a
// supervisor, so that the user sees the reason instead of a dead
// supervisor. Empty fields are valid: defaults fills them in.
func (o Options) Validate() error {
	var errs []error
	if o.StateDir == "" {
		errs = append(errs, errors.New("lab: StateDir is required"))
	}
	switch o.Profile {
	case "", ProfileLocal:
	case ProfileKind:
		errs = append(errs, errKindProfile)
	default:
		errs = append(errs, fmt.Errorf("lab: unknown profile %q (want %q or %q)", o.Profile, ProfileLocal, ProfileKind))
	}
	if o.Hosts < 0 {
		errs = append(errs, fmt.Errorf("lab: %d hosts: the number of hosts cannot be negative", o.Hosts))
	}
	for _, i := range slices.Sorted(maps.Keys(o.HostSizes)) {
		if i < 0 || i >= o.Hosts {
			errs = append(errs, fmt.Errorf("lab: HostSizes names host %d, but the lab has hosts 0 to %d", i, o.Hosts-1))
		}
	}
	if o.Accel != "" && o.Accel != string(machines.AccelKVM) && o.Accel != string(machines.AccelTCG) {
		errs = append(errs, fmt.Errorf("lab: unknown accel %q (want %q, %q or empty to probe)", o.Accel, machines.AccelKVM, machines.AccelTCG))
	}
	if o.MachineController != "" {
		if err := mapi.CheckMachineControllerBinary(o.MachineController); err != nil {
			errs = append(errs, fmt.Errorf("lab: %w", err))
		}
	}
	return errors.Join(errs...)
}

// errKindProfile: the kind hub backend exists (lab/hub/kind), but putting
// Cluster API and the providers into a kind cluster takes clusterctl and
// released provider images, which this lab does not deploy yet.
var errKindProfile = errors.New("lab: profile kind: the kind hub backend exists, but deploying Cluster API and the providers into it (clusterctl) is not implemented yet; use the local profile")

// defaults validates the options and fills in the defaults.
func (o *Options) defaults() error {
	if err := o.Validate(); err != nil {
		return err
	}
	abs, err := filepath.Abs(o.StateDir)
	if err != nil {
		return fmt.Errorf("lab: state dir: %w", err)
	}
	o.StateDir = abs
	if o.MachineController != "" {
		// The supervisor `lab up` detaches may run elsewhere.
		if o.MachineController, err = filepath.Abs(o.MachineController); err != nil {
			return fmt.Errorf("lab: machine controller: %w", err)
		}
	}
	if o.LogDir == "" {
		o.LogDir = filepath.Join(o.StateDir, "logs")
	}
	if o.Profile == "" {
		o.Profile = ProfileLocal
	}
	if o.Progress == nil {
		o.Progress = discardProgress{}
	}
	if o.HostsNamespace == "" {
		o.HostsNamespace = "lab-hosts"
	}
	if len(o.Releases) == 0 {
		o.Releases = releases.Lab
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
