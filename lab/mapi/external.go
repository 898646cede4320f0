package mapi

import (
	"context"
	"debug/buildinfo"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/go-logr/logr"

	"github.com/paritylab/paritylab/lab/ports"
	"github.com/paritylab/paritylab/lab/process"
	"github.com/paritylab/paritylab/lab/state"
)

// ExternalController names an upstream bare-metal machine controller
// binary (cmd/manager of openshift/cluster-api-provider-baremetal, also in
// OpenShift release images) to run instead of the in-process port. The
// binary carries the Machine controller with the upstream actuator and
// the Metal3Remediation controller; MAO's MachineSet, MachineHealthCheck
// and nodelink controllers, the bare-metal operator and the CSR approver
// stay in process. It runs as a child process against the cluster, the
// way openshift-install runs provider binaries against its local control
// plane: a kubeconfig (KUBECONFIG), a health probe on loopback, a log
// file, and SIGTERM on Stop.
type ExternalController struct {
	// Binary is the manager to run. Required.
	Binary string
	// Kubeconfig is the path of the cluster's admin kubeconfig, a 0600
	// file the caller keeps. Required.
	Kubeconfig string
	// LogPath receives its output. Required.
	LogPath string
	// Tracker records the process for `lab down`. Default none.
	Tracker state.Tracker
	// ReadyTimeout bounds the wait for its readiness probe. Default 2m.
	ReadyTimeout time.Duration
}

// ExternalControllerName names the process in logs and the ledger.
const ExternalControllerName = "machine-controller"

func (e *ExternalController) validate() error {
	switch {
	case e.Binary == "":
		return errors.New("machine API options: MachineController.Binary is required")
	case e.Kubeconfig == "" || e.LogPath == "":
		return errors.New("machine API options: MachineController.Kubeconfig and LogPath are required")
	}
	return CheckMachineControllerBinary(e.Binary)
}

// CheckMachineControllerBinary says why a path cannot be run as the
// machine controller, or nil.
func CheckMachineControllerBinary(path string) error {
	info, err := os.Stat(path)
	if err != nil {
		return fmt.Errorf("machine controller binary: %w", err)
	}
	if !info.Mode().IsRegular() || info.Mode().Perm()&0o111 == 0 {
		return fmt.Errorf("machine controller binary %s is not an executable file", path)
	}
	return nil
}

func (e *ExternalController) defaults() {
	if e.Tracker == nil {
		e.Tracker = state.Discard
	}
	if e.ReadyTimeout <= 0 {
		e.ReadyTimeout = 2 * time.Minute
	}
}

// startExternal runs the binary with upstream's flags: the machine API's
// namespace, its health probe on a free loopback port, no metrics
// listener, no leader election and no webhook server (nothing registers
// its webhooks in a lab cluster). It returns once /readyz answers ok.
func startExternal(ctx context.Context, e *ExternalController, namespace string, logger logr.Logger) (*process.Process, error) {
	port, err := ports.Free()
	if err != nil {
		return nil, err
	}
	health := ports.Loopback + ":" + strconv.Itoa(port)
	var started *process.Identity
	p, err := process.Start(ctx, process.Spec{
		Name:  ExternalControllerName,
		Path:  e.Binary,
		Argv0: MachineControllerAgent,
		Args: []string{
			"--namespace=" + namespace,
			"--health-addr=" + health,
			"--metrics-addr=0",
			"--leader-elect=false",
			"--webhook-enabled=false",
		},
		Env:          []string{"KUBECONFIG=" + e.Kubeconfig},
		LogPath:      e.LogPath,
		Ready:        process.HTTPReady(http.DefaultClient, "http://"+health+"/readyz", "ok"),
		ReadyTimeout: e.ReadyTimeout,
		OnStart: func(id process.Identity) error {
			started = &id
			return e.Tracker.Track(state.ProcessResource(id))
		},
		Logger: logger,
	})
	if err != nil && started != nil && !started.Alive() {
		// Start stopped what it started: nothing is left for lab down.
		err = errors.Join(err, e.Tracker.Forget(state.ProcessResource(*started)))
	}
	return p, err
}

// stopExternal ends the process and forgets its record; a process that
// would not stop keeps its record for `lab down`.
func stopExternal(p *process.Process, tracker state.Tracker) error {
	id := p.Identity()
	if err := p.Stop(); err != nil {
		return fmt.Errorf("stop %s: %w", ExternalControllerName, err)
	}
	return tracker.Forget(state.ProcessResource(id))
}

// MachineControllerBuild says what a machine controller binary is, from
// the build information Go embeds: its main package and its module's
// version (or VCS revision). A binary without it (not Go, or its build
// information stripped) is named by its file.
func MachineControllerBuild(path string) (implementation, version string) {
	info, err := buildinfo.ReadFile(path)
	if err != nil || info.Path == "" {
		return "machine controller binary " + filepath.Base(path), "unknown"
	}
	version = info.Main.Version
	if version == "" || version == "(devel)" {
		version = "unknown"
		for _, s := range info.Settings {
			if s.Key == "vcs.revision" && s.Value != "" {
				version = s.Value
			}
		}
	}
	return info.Path, version
}
