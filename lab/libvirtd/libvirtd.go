package libvirtd

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"github.com/go-logr/logr"
	"libvirt.org/go/libvirt"

	"github.com/paritylab/paritylab/lab/process"
	"github.com/paritylab/paritylab/lab/state"
)

// URI is the libvirt connection the lab uses.
const URI = "qemu:///system"

// Options configure Ensure.
type Options struct {
	// LogDir receives libvirtd.log and virtlogd.log when the lab starts
	// the daemons. Required.
	LogDir string
	// Tracker records started daemons. Default state.Discard.
	Tracker state.Tracker
	// KeepWithParent keeps daemons running if this process dies. The lab
	// supervisor leaves it false (the kernel ends them with it); a
	// short-lived helper (teardown after a crash) also leaves it false.
	KeepWithParent bool
	// Logger receives progress. Default discard.
	Logger logr.Logger
}

// Daemon is the libvirt daemon in use.
type Daemon struct {
	opts      Options
	processes []*process.Process
	stopOnce  sync.Once
	stopErr   error
}

// Ensure returns a running libvirt daemon, starting virtlogd and libvirtd
// when none answers.
func Ensure(ctx context.Context, opts Options) (*Daemon, error) {
	if opts.Tracker == nil {
		opts.Tracker = state.Discard
	}
	if opts.Logger.GetSink() == nil {
		opts.Logger = logr.Discard()
	}
	d := &Daemon{opts: opts}
	if answers() {
		opts.Logger.V(1).Info("Using the running libvirt daemon", "uri", URI)
		return d, nil
	}
	if opts.LogDir == "" {
		return nil, errors.New("libvirtd: LogDir is required to start a daemon")
	}
	if err := checkHost(); err != nil {
		return nil, err
	}
	if err := d.start(ctx); err != nil {
		return nil, errors.Join(err, d.Stop())
	}
	return d, nil
}

// Started says whether this lab started the daemon (and Stop will end it).
func (d *Daemon) Started() bool { return len(d.processes) > 0 }

// Connect opens a connection to the daemon, with domain events enabled.
func (d *Daemon) Connect() (*libvirt.Connect, error) {
	return Connect()
}

// Connect opens a connection to the system daemon, with domain events
// enabled.
func Connect() (*libvirt.Connect, error) {
	if err := EnableEvents(); err != nil {
		return nil, err
	}
	conn, err := libvirt.NewConnect(URI)
	if err != nil {
		return nil, fmt.Errorf("connect to %s: %w", URI, err)
	}
	return conn, nil
}

// Stop ends the daemons this lab started, libvirtd first; a daemon that was
// already running is left alone. Safe to call twice.
func (d *Daemon) Stop() error {
	d.stopOnce.Do(func() {
		var errs []error
		for i := len(d.processes) - 1; i >= 0; i-- {
			p := d.processes[i]
			if err := p.Stop(); err != nil {
				errs = append(errs, err)
				continue
			}
			errs = append(errs, d.opts.Tracker.Forget(state.ProcessResource(p.Identity())))
		}
		d.stopErr = errors.Join(errs...)
	})
	return d.stopErr
}

func (d *Daemon) start(ctx context.Context) error {
	for _, name := range []string{"virtlogd", "libvirtd"} {
		path, err := exec.LookPath(name)
		if err != nil {
			return fmt.Errorf("find %s (is libvirt-daemon installed? run `make deps`): %w", name, err)
		}
		ready := socketReady(filepath.Join(runDir, "virtlogd-sock"))
		if name == "libvirtd" {
			ready = func(context.Context) error { return connectErr() }
		}
		p, err := process.Start(ctx, process.Spec{
			Name:           name,
			Path:           path,
			LogPath:        filepath.Join(d.opts.LogDir, name+".log"),
			Ready:          ready,
			ReadyTimeout:   30 * time.Second,
			KeepWithParent: d.opts.KeepWithParent,
			OnStart: func(id process.Identity) error {
				return d.opts.Tracker.Track(state.ProcessResource(id))
			},
			Logger: d.opts.Logger,
		})
		if err != nil {
			return err
		}
		d.processes = append(d.processes, p)
	}
	d.opts.Logger.Info("Started libvirt daemons", "uri", URI)
	return nil
}

// runDir is where libvirt's system daemons put their sockets.
const runDir = "/var/run/libvirt"

func answers() bool { return connectErr() == nil }

func connectErr() error {
	conn, err := libvirt.NewConnect(URI)
	if err != nil {
		return err
	}
	_, err = conn.Close()
	return err
}

func socketReady(path string) func(context.Context) error {
	return func(context.Context) error {
		info, err := os.Stat(path)
		if err != nil {
			return err
		}
		if info.Mode()&os.ModeSocket == 0 {
			return fmt.Errorf("%s is not a socket", path)
		}
		return nil
	}
}

// checkHost verifies what libvirt's compiled-in defaults need and `make
// deps` prepares: the user QEMU runs as, its groups, the runtime dirs.
func checkHost() error {
	var missing []string
	if _, err := user.Lookup("libvirt-qemu"); err != nil {
		missing = append(missing, "user libvirt-qemu")
	}
	for _, g := range []string{"kvm", "libvirt-qemu"} {
		if _, err := user.LookupGroup(g); err != nil {
			missing = append(missing, "group "+g)
		}
	}
	for _, dir := range []string{runDir, "/var/log/libvirt"} {
		if info, err := os.Stat(dir); err != nil || !info.IsDir() {
			missing = append(missing, "directory "+dir)
		}
	}
	// QEMU must be able to open /dev/kvm, else libvirt re-probes QEMU on
	// every lookup (tens of seconds each).
	if info, err := os.Stat("/dev/kvm"); err == nil {
		st, ok := info.Sys().(*syscall.Stat_t)
		if kvm, gerr := user.LookupGroup("kvm"); ok && gerr == nil && (fmt.Sprint(st.Gid) != kvm.Gid || info.Mode().Perm()&0o060 != 0o060) {
			missing = append(missing, "/dev/kvm readable and writable by group kvm")
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("host is not prepared for libvirt (missing %v): run `make deps`", missing)
	}
	return nil
}
