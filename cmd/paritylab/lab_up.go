package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/paritylab/paritylab/lab"
	"github.com/paritylab/paritylab/lab/progress"
)

func newLabUpCommand(flags *labFlags) *cobra.Command {
	opts := &runOptions{}
	var foreground bool
	cmd := &cobra.Command{
		Use:   "up",
		Short: "Bring a lab up and leave it running in the background",
		Long: `Bring a lab up: a hub (local kube-apiserver + etcd), the CRDs, Cluster API
core with its webhooks, the lab's assisted service and bare-metal operator,
upstream CAPM3 (its own manager, as a process), the agent providers and,
with --hosts, libvirt hosts behind
the Redfish BMC emulator as BareMetalHosts. By default a supervisor process
keeps the lab running after this command returns; 'paritylab lab down'
stops it. With --foreground this command is the supervisor and Ctrl-C
tears the lab down.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			stateDir, err := flags.resolveStateDir()
			if err != nil {
				return err
			}
			// Refuse here what the lab would refuse: a detached
			// supervisor's error would only reach its log.
			if err := opts.labOptions(stateDir, nil).Validate(); err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			fmt.Fprintf(out, "Bringing lab %q up (profile %s, state %s)\n", flags.name, opts.profile, stateDir)
			start := time.Now()
			if foreground {
				return superviseLab(stateDir, opts, progress.NewLive(out), func() {
					printReady(out, stateDir, time.Since(start))
					fmt.Fprintln(out, "Running in the foreground; Ctrl-C tears the lab down.")
				})
			}
			if err := startSupervisor(stateDir, opts, out); err != nil {
				return err
			}
			printReady(out, stateDir, time.Since(start))
			return nil
		},
	}
	opts.register(cmd)
	cmd.Flags().BoolVar(&foreground, "foreground", false, "supervise the lab in this process until Ctrl-C")
	return cmd
}

func printReady(out io.Writer, stateDir string, took time.Duration) {
	fmt.Fprintf(out, "Lab ready in %s.\n", took.Round(100*time.Millisecond))
	fmt.Fprintf(out, "  export KUBECONFIG=%s\n", filepath.Join(stateDir, "kubeconfig"))
	fmt.Fprintln(out, "  paritylab lab status   # what runs")
	fmt.Fprintln(out, "  paritylab lab down     # remove everything")
}

// supervisorExitWait bounds how long `lab up` waits for a supervisor that
// closed its progress stream to exit, so that its last words are in its
// log before they are shown.
const supervisorExitWait = 10 * time.Second

// startSupervisor starts `paritylab lab run` in its own session, relays its
// progress until it is ready or fails, and forwards Ctrl-C to it.
func startSupervisor(stateDir string, opts *runOptions, out io.Writer) error {
	self, err := os.Executable()
	if err != nil {
		return fmt.Errorf("find own executable: %w", err)
	}
	logDir := opts.logDir
	if logDir == "" {
		logDir = filepath.Join(stateDir, "logs")
	}
	if err := os.MkdirAll(logDir, 0o750); err != nil {
		return fmt.Errorf("create log dir: %w", err)
	}
	logFile, log, err := openSupervisorLog(filepath.Join(logDir, "supervisor.log"))
	if err != nil {
		return err
	}
	defer logFile.Close()
	pr, pw, err := os.Pipe()
	if err != nil {
		return fmt.Errorf("create progress pipe: %w", err)
	}
	defer pr.Close()
	cmd := exec.Command(self, append([]string{"lab", "run", "--state-dir", stateDir, "--log-dir", logDir}, opts.args()...)...)
	cmd.Stdout, cmd.Stderr, cmd.ExtraFiles = logFile, logFile, []*os.File{pw}
	// A session of its own: the supervisor outlives this command and the
	// terminal's signals.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		pw.Close()
		return fmt.Errorf("start supervisor: %w", err)
	}
	pw.Close()
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	stopForward := forwardInterrupt(cmd.Process)
	defer stopForward()
	err = relayProgress(pr, progress.NewLive(out))
	if !errors.Is(err, errSupervisorStopped) {
		return err
	}
	// The supervisor closes the stream before it prints why it stops.
	select {
	case <-exited:
	case <-time.After(supervisorExitWait):
	}
	return log.stoppedError()
}

// forwardInterrupt turns a Ctrl-C of the user into SIGTERM for the
// supervisor, which then undoes what it started.
func forwardInterrupt(p *os.Process) func() {
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM)
	done := make(chan struct{})
	go func() {
		select {
		case <-sigs:
			_ = p.Signal(syscall.SIGTERM)
		case <-done:
		}
	}()
	return func() { signal.Stop(sigs); close(done) }
}

// errSupervisorStopped: the progress stream ended without the lab being
// ready and without a failed step to explain it (the supervisor died or
// refused to start); its log says why.
var errSupervisorStopped = errors.New("lab supervisor stopped before the lab was ready")

// relayProgress renders the supervisor's events until it reports ready or
// its stream ends without that (it failed or was stopped).
func relayProgress(r io.Reader, progress lab.Progress) error {
	sc := bufio.NewScanner(r)
	var lastErr string
	for sc.Scan() {
		var ev progressEvent
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			continue
		}
		switch ev.Phase {
		case "started":
			progress.Started(ev.Step)
		case "finished":
			var err error
			if ev.Error != "" {
				err, lastErr = errors.New(ev.Error), ev.Error
			}
			progress.Finished(ev.Step, time.Duration(ev.Seconds*float64(time.Second)), err)
		case "ready":
			return nil
		}
	}
	if lastErr != "" {
		return fmt.Errorf("lab did not come up: %s", lastErr)
	}
	return errSupervisorStopped
}
