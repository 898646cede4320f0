package registry

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"time"

	"github.com/go-logr/logr"

	"github.com/paritylab/paritylab/lab/ports"
	"github.com/paritylab/paritylab/lab/process"
	"github.com/paritylab/paritylab/lab/state"
)

// ComponentName is the default Name: the registry process in logs, the
// ledger and the log file (<LogDir>/registry.log).
const ComponentName = "registry"

// Binary is the executable Debian's docker-registry package installs.
const Binary = "docker-registry"

// Options configure Start.
type Options struct {
	// Dir holds the configuration and the registry's storage (Dir/data);
	// Start creates it, Stop removes it. Required.
	Dir string
	// LogDir receives <Name>.log: the registry's log, one JSON object a
	// line, with an entry for every request it answered (Requests reads
	// them). Required.
	LogDir string
	// Name names the process in the ledger and its log file, so that a lab
	// can run several registries. Default ComponentName.
	Name string
	// Address is the loopback address to listen on. Default
	// ports.Loopback, which the lab's VMs reach; ports.Unrouted for a
	// registry they must not reach.
	Address string
	// Path is the registry executable. Default: docker-registry on PATH.
	Path string
	// Tracker records the process and Dir, for `lab down` after a crash.
	// Default state.Discard.
	Tracker state.Tracker
	// ReadyTimeout bounds the wait for the registry's API. Default 30s.
	ReadyTimeout time.Duration
	// Logger receives progress. Default discard.
	Logger logr.Logger
}

func (o *Options) defaults() error {
	if o.Dir == "" || o.LogDir == "" {
		return errors.New("registry: Dir and LogDir are required")
	}
	if o.Path == "" {
		path, err := exec.LookPath(Binary)
		if err != nil {
			return fmt.Errorf("registry: %s not found (Debian package docker-registry; `make deps` installs it): %w", Binary, err)
		}
		o.Path = path
	}
	if o.Name == "" {
		o.Name = ComponentName
	}
	if o.Address == "" {
		o.Address = ports.Loopback
	}
	if o.Tracker == nil {
		o.Tracker = state.Discard
	}
	if o.ReadyTimeout <= 0 {
		o.ReadyTimeout = 30 * time.Second
	}
	if o.Logger.GetSink() == nil {
		o.Logger = logr.Discard()
	}
	return nil
}

// Registry is a running registry.
type Registry struct {
	opts Options
	host string
	proc *process.Process
	// launched is the process recorded in the ledger, also when it
	// exited before it was ready (process.Start has then ended it).
	launched *process.Identity
}

// Start starts an empty registry on a free port of its address and returns once
// its API answers. On error nothing it started keeps running.
func Start(ctx context.Context, opts Options) (_ *Registry, retErr error) {
	if err := opts.defaults(); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(opts.Dir, 0o700); err != nil {
		return nil, fmt.Errorf("create %s: %w", opts.Dir, err)
	}
	if err := opts.Tracker.Track(state.DirResource(opts.Dir)); err != nil {
		return nil, err
	}
	r := &Registry{opts: opts}
	defer func() {
		if retErr != nil {
			retErr = errors.Join(retErr, r.Stop())
		}
	}()
	port, err := ports.FreeOn(opts.Address)
	if err != nil {
		return nil, err
	}
	r.host = net.JoinHostPort(opts.Address, strconv.Itoa(port))
	config, err := writeConfig(opts.Dir, filepath.Join(opts.Dir, "data"), r.host)
	if err != nil {
		return nil, err
	}
	proc, err := process.Start(ctx, process.Spec{
		Name:    opts.Name,
		Path:    opts.Path,
		Args:    []string{"serve", config},
		LogPath: r.LogPath(),
		// The distribution API's base endpoint: 200 and {} when the
		// registry serves version 2 of the API.
		Ready:        process.HTTPReady(http.DefaultClient, "http://"+r.host+"/v2/", "{}"),
		ReadyTimeout: opts.ReadyTimeout,
		OnStart: func(id process.Identity) error {
			r.launched = &id
			return opts.Tracker.Track(state.ProcessResource(id))
		},
		Logger: opts.Logger,
	})
	if err != nil {
		return nil, fmt.Errorf("start the registry on %s: %w", r.host, err)
	}
	r.proc = proc
	opts.Logger.Info("Registry started", "host", r.host, "pid", proc.Identity().PID)
	return r, nil
}

// Host is the registry's host:port, for image references
// (<host>/<repository>:<tag>).
func (r *Registry) Host() string { return r.host }

// LogPath is the registry's log, which outlives Stop.
func (r *Registry) LogPath() string { return filepath.Join(r.opts.LogDir, r.opts.Name+".log") }

// Identity is the registry process, nil once stopped.
func (r *Registry) Identity() *process.Identity {
	if r.proc == nil {
		return nil
	}
	id := r.proc.Identity()
	return &id
}

// Exited is closed when the registry process ends.
func (r *Registry) Exited() <-chan struct{} { return r.proc.Exited() }

// Stop ends the registry, removes Dir (its configuration and every image
// pushed) and forgets what Start recorded. Safe to call twice.
func (r *Registry) Stop() error {
	var errs []error
	if r.proc != nil {
		if err := r.proc.Stop(); err != nil {
			return fmt.Errorf("stop the registry: %w", err) // still running: keep its record for lab down
		}
		r.proc = nil
	}
	if r.launched != nil {
		errs = append(errs, r.opts.Tracker.Forget(state.ProcessResource(*r.launched)))
		r.launched = nil
	}
	if err := os.RemoveAll(r.opts.Dir); err != nil {
		return errors.Join(append(errs, fmt.Errorf("remove %s: %w", r.opts.Dir, err))...)
	}
	errs = append(errs, r.opts.Tracker.Forget(state.DirResource(r.opts.Dir)))
	return errors.Join(errs...)
}
