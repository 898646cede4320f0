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

// KindUser is the ledger kind of a handle on the daemon.
const KindUser = "libvirtd-user"

// Options configure Ensure.
type Options struct {
	// LogDir receives libvirtd.log and virtlogd.log when this call starts
	// the daemons. Required.
	LogDir string
	// Tracker records the handle, so a crashed run's `lab down` lets go
	// of the daemon. Default state.Discard.
	Tracker state.Tracker
	// Logger receives progress. Default discard.
	Logger logr.Logger
}

// Daemon is a handle on the libvirt daemon in use.
type Daemon struct {
	opts     Options
	userFile string
	started  bool
	stopOnce sync.Once
	stopErr  error
}

func init() {
	state.RegisterReaper(KindUser, reapUser)
}

// Ensure returns a handle on a running libvirt daemon. When none answers,
// it starts virtlogd and libvirtd, detached from this process: they serve
// every paritylab process until the last handle is stopped (a daemon
// paritylab did not start is never stopped).
func Ensure(ctx context.Context, opts Options) (*Daemon, error) {
	if opts.Tracker == nil {
		opts.Tracker = state.Discard
	}
	if opts.Logger.GetSink() == nil {
		opts.Logger = logr.Discard()
	}
	d := &Daemon{opts: opts}
	err := withRegistryLock(ctx, func() error {
		file, err := addUser()
		if err != nil {
			return err
		}
		d.userFile = file
		if err := opts.Tracker.Track(state.Resource{Kind: KindUser, ID: file}); err != nil {
			return err
		}
		return d.startIfNeeded(ctx)
	})
	if err != nil {
		return nil, errors.Join(err, d.Stop())
	}
	return d, nil
}

func (d *Daemon) startIfNeeded(ctx context.Context) error {
	if answers() {
		d.opts.Logger.V(1).Info("Using the running libvirt daemon", "uri", URI)
		return nil
	}
	rec, err := readDaemon()
	if err != nil {
		return err
	}
	if rec != nil && rec.libvirtdAlive() {
		// A daemon of ours that runs but does not answer is busy (a
		// loaded machine, many domains starting), not stale: stopping
		// it would kill every other lab's hosts.
		return waitAnswering(ctx, rec)
	}
	// A record of daemons whose libvirtd is gone is stale (it crashed).
	if rec != nil {
		if err := stopRecorded(ctx, rec); err != nil {
			return err
		}
	}
	if d.opts.LogDir == "" {
		return errors.New("libvirtd: LogDir is required to start a daemon")
	}
	if err := checkHost(); err != nil {
		return err
	}
	started, err := start(ctx, d.opts)
	if err != nil {
		return err
	}
	d.started = true
	return writeDaemon(*started)
}

// Started says whether this handle started the daemon.
func (d *Daemon) Started() bool { return d.started }

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

// Stop lets go of the daemon; the last live handle stops the daemons
// paritylab started. Safe to call twice.
func (d *Daemon) Stop() error {
	d.stopOnce.Do(func() {
		if d.userFile == "" {
			return
		}
		d.stopErr = release(context.Background(), d.userFile)
		if d.stopErr == nil {
			d.stopErr = d.opts.Tracker.Forget(state.Resource{Kind: KindUser, ID: d.userFile})
		}
	})
	return d.stopErr
}

// release removes a handle and stops paritylab's daemons when no live
// handle remains.
func release(ctx context.Context, userFile string) error {
	return withRegistryLock(ctx, func() error {
		if err := os.Remove(userFile); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("release libvirtd: %w", err)
		}
		live, err := liveUsers()
		if err != nil || live > 0 {
			return err
		}
		rec, err := readDaemon()
		if err != nil || rec == nil {
			return err
		}
		return stopRecorded(ctx, rec)
	})
}

// reapUser releases the handle of a run that crashed.
func reapUser(ctx context.Context, r state.Resource) error {
	if !isUserFile(r.ID) {
		return fmt.Errorf("libvirtd handle %s is not in the registry %s", r.ID, RegistryDir)
	}
	return release(ctx, r.ID)
}

func start(ctx context.Context, opts Options) (*daemonRecord, error) {
	rec := &daemonRecord{LogDir: opts.LogDir}
	for _, name := range []string{"virtlogd", "libvirtd"} {
		path, err := exec.LookPath(name)
		if err != nil {
			return nil, errors.Join(fmt.Errorf("find %s (is libvirt-daemon installed? run `make deps`): %w", name, err), stopRecorded(ctx, rec))
		}
		ready := socketReady(filepath.Join(runDir, "virtlogd-sock"))
		if name == "libvirtd" {
			ready = func(context.Context) error { return connectErr() }
		}
		p, err := process.Start(ctx, process.Spec{
			Name: name, Path: path, LogPath: filepath.Join(opts.LogDir, name+".log"),
			Ready: ready, ReadyTimeout: 30 * time.Second,
			// Shared by every paritylab process: not tied to this one.
			KeepWithParent: true,
			Logger:         opts.Logger,
		})
		if err != nil {
			return nil, errors.Join(err, stopRecorded(ctx, rec))
		}
		rec.Processes = append(rec.Processes, p.Identity())
	}
	opts.Logger.Info("Started libvirt daemons", "uri", URI)
	return rec, nil
}

// runDir is where libvirt's system daemons put their sockets.
const runDir = "/var/run/libvirt"

func answers() bool { return probeDaemon() == nil }

// probeDaemon checks that the daemon answers; tests replace it.
var probeDaemon = connectErr

// busyDaemonWait bounds how long a running but silent daemon may take to
// answer before Ensure gives up on it.
var busyDaemonWait = time.Minute

func waitAnswering(ctx context.Context, rec *daemonRecord) error {
	deadline := time.Now().Add(busyDaemonWait)
	for {
		err := probeDaemon()
		if err == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the libvirt daemon paritylab started (%s) runs but has not answered for %s: %w", rec.Processes[len(rec.Processes)-1], busyDaemonWait, err)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("wait for the libvirt daemon to answer: %w", ctx.Err())
		case <-time.After(500 * time.Millisecond):
		}
	}
}

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
