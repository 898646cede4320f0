package process

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"github.com/go-logr/logr"
)

// Spec describes a child process to supervise.
type Spec struct {
	// Name is the component name, used in logs, errors and the identity.
	Name string
	// Path is the executable.
	Path string
	// Args are the command-line arguments, without the program name.
	Args []string
	// Argv0 is the program name the process sees (argv[0]); default Path.
	// Kubernetes clients take their user agent from it, so a binary run
	// under the name upstream ships it with shows up in audit logs as it
	// would there.
	Argv0 string
	// Env is added to the parent's environment.
	Env []string
	// LogPath receives stdout and stderr, appended; its directory is created.
	// Required: a component that fails must leave its output somewhere.
	LogPath string
	// Ready is polled until it returns nil. Nil means ready once started.
	Ready func(ctx context.Context) error
	// ReadyTimeout bounds the wait for Ready. Default 60s.
	ReadyTimeout time.Duration
	// StopTimeout is how long Stop waits after SIGTERM before SIGKILL.
	// Default 10s.
	StopTimeout time.Duration
	// KeepWithParent, when false (the default), has the kernel kill the
	// process if the supervising process dies, so a crashed lab does not
	// leave orphans serving ports. Set it for daemons that must outlive
	// their launcher.
	KeepWithParent bool
	// OnStart is called with the identity of the process as soon as it
	// runs, before the readiness wait, so a caller can record it where a
	// crashed supervisor's successor finds it. An error stops the process.
	OnStart func(Identity) error
	// Logger receives lifecycle messages. Default: discard.
	Logger logr.Logger
}

// Process is a started child process.
type Process struct {
	spec    Spec
	cmd     *exec.Cmd
	id      Identity
	logFile *os.File

	exited  chan struct{}
	waitErr error

	stopOnce sync.Once
	stopErr  error
}

// Start launches the process and waits until it is ready. On any failure the
// process is stopped again and the error carries the tail of its log.
func Start(ctx context.Context, spec Spec) (_ *Process, retErr error) {
	if err := spec.validate(); err != nil {
		return nil, err
	}
	spec.defaults()
	p := &Process{spec: spec, exited: make(chan struct{})}
	if err := p.launch(); err != nil {
		return nil, err
	}
	defer func() {
		if retErr != nil {
			_ = p.Stop()
		}
	}()
	if spec.OnStart != nil {
		if err := spec.OnStart(p.id); err != nil {
			return nil, fmt.Errorf("record %s: %w", spec.Name, err)
		}
	}
	if err := p.waitReady(ctx); err != nil {
		return nil, &StartError{Name: spec.Name, Path: spec.Path, LogPath: spec.LogPath, LogTail: tail(spec.LogPath, 30), Err: err}
	}
	spec.Logger.V(1).Info("Process ready", "component", spec.Name, "pid", p.id.PID)
	return p, nil
}

func (s Spec) validate() error {
	switch {
	case s.Name == "":
		return errors.New("process spec: Name is required")
	case s.Path == "":
		return fmt.Errorf("process spec %s: Path is required", s.Name)
	case s.LogPath == "":
		return fmt.Errorf("process spec %s: LogPath is required", s.Name)
	}
	return nil
}

func (s *Spec) defaults() {
	if s.ReadyTimeout == 0 {
		s.ReadyTimeout = 60 * time.Second
	}
	if s.StopTimeout == 0 {
		s.StopTimeout = 10 * time.Second
	}
	if s.Logger.GetSink() == nil {
		s.Logger = logr.Discard()
	}
}

func (p *Process) launch() error {
	if err := os.MkdirAll(filepath.Dir(p.spec.LogPath), 0o750); err != nil {
		return fmt.Errorf("create log dir for %s: %w", p.spec.Name, err)
	}
	logFile, err := os.OpenFile(p.spec.LogPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o640)
	if err != nil {
		return fmt.Errorf("open log of %s: %w", p.spec.Name, err)
	}
	cmd := exec.Command(p.spec.Path, p.spec.Args...)
	if p.spec.Argv0 != "" {
		cmd.Args[0] = p.spec.Argv0
	}
	cmd.Env = append(os.Environ(), p.spec.Env...)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.SysProcAttr = sysProcAttr(p.spec.KeepWithParent)
	if err := cmd.Start(); err != nil {
		_ = logFile.Close()
		return fmt.Errorf("start %s: %w", p.spec.Name, err)
	}
	p.cmd, p.logFile = cmd, logFile
	go p.wait()
	id, err := IdentityOf(p.spec.Name, cmd.Process.Pid)
	if err != nil {
		// The process died before we could read it; Wait has its status.
		<-p.exited
		return &StartError{Name: p.spec.Name, Path: p.spec.Path, LogPath: p.spec.LogPath, LogTail: tail(p.spec.LogPath, 30), Err: p.exitError()}
	}
	p.id = id
	p.spec.Logger.V(1).Info("Process started", "component", p.spec.Name, "pid", id.PID, "log", p.spec.LogPath)
	return nil
}

// sysProcAttr puts the child in its own process group, so a Ctrl-C at the
// terminal reaches only the supervisor, which then stops children in order.
func sysProcAttr(keepWithParent bool) *syscall.SysProcAttr {
	attr := &syscall.SysProcAttr{Setpgid: true}
	if !keepWithParent {
		attr.Pdeathsig = syscall.SIGKILL
	}
	return attr
}

func (p *Process) wait() {
	p.waitErr = p.cmd.Wait()
	_ = p.logFile.Close()
	close(p.exited)
}

func (p *Process) exitError() error {
	if p.waitErr != nil {
		return fmt.Errorf("exited: %w", p.waitErr)
	}
	return errors.New("exited with status 0")
}

func (p *Process) waitReady(ctx context.Context) error {
	if p.spec.Ready == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, p.spec.ReadyTimeout)
	defer cancel()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	var lastErr error
	for {
		if lastErr = p.spec.Ready(ctx); lastErr == nil {
			return nil
		}
		select {
		case <-p.exited:
			return p.exitError()
		case <-ctx.Done():
			return fmt.Errorf("not ready after %s: %w", p.spec.ReadyTimeout, lastErr)
		case <-tick.C:
		}
	}
}

// Identity returns who the process is, for recording in the lab state.
func (p *Process) Identity() Identity { return p.id }

// Exited is closed when the process has exited.
func (p *Process) Exited() <-chan struct{} { return p.exited }

// Stop ends the process: SIGTERM, then SIGKILL after StopTimeout. It is safe
// to call more than once and after the process exited by itself.
func (p *Process) Stop() error {
	p.stopOnce.Do(func() {
		p.stopErr = terminate(p.cmd.Process, p.exited, p.spec.StopTimeout)
		p.spec.Logger.V(1).Info("Process stopped", "component", p.spec.Name, "pid", p.id.PID)
	})
	return p.stopErr
}

func terminate(proc *os.Process, exited <-chan struct{}, timeout time.Duration) error {
	select {
	case <-exited:
		return nil
	default:
	}
	if err := proc.Signal(syscall.SIGTERM); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return fmt.Errorf("send SIGTERM to pid %d: %w", proc.Pid, err)
	}
	select {
	case <-exited:
		return nil
	case <-time.After(timeout):
	}
	if err := proc.Kill(); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return fmt.Errorf("kill pid %d: %w", proc.Pid, err)
	}
	<-exited
	return nil
}

// Terminate ends a process started by another (possibly crashed) supervisor:
// SIGTERM, then SIGKILL after timeout, both only while the PID still names
// the identified process. It returns nil if the process is already gone.
func Terminate(ctx context.Context, id Identity, timeout time.Duration) error {
	if err := id.Signal(syscall.SIGTERM); err != nil {
		if errors.Is(err, ErrGone) {
			return nil
		}
		return err
	}
	if waitGone(ctx, id, timeout) {
		return nil
	}
	if err := id.Signal(syscall.SIGKILL); err != nil && !errors.Is(err, ErrGone) {
		return err
	}
	if !waitGone(ctx, id, 5*time.Second) {
		return fmt.Errorf("%s still runs after SIGKILL", id)
	}
	return nil
}

func waitGone(ctx context.Context, id Identity, timeout time.Duration) bool {
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		if !id.Alive() {
			return true
		}
		select {
		case <-ctx.Done():
			return !id.Alive()
		case <-time.After(50 * time.Millisecond):
		}
	}
	return !id.Alive()
}
