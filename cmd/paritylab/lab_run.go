package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/paritylab/paritylab/lab"
)

// runOptions are the flags of `lab up` that the supervisor also takes.
type runOptions struct {
	logDir  string
	profile string
}

func (o *runOptions) register(cmd *cobra.Command) {
	cmd.Flags().StringVar(&o.logDir, "log-dir", "", "where component logs go (default <state-dir>/logs, removed by lab down)")
	cmd.Flags().StringVar(&o.profile, "profile", lab.ProfileLocal, "lab profile: local or kind")
}

// progressFD is the descriptor on which a detached supervisor reports
// progress to the `lab up` that started it.
const progressFD = 3

func newLabRunCommand(flags *labFlags) *cobra.Command {
	opts := &runOptions{}
	cmd := &cobra.Command{
		Use:    "run",
		Short:  "Run a lab in this process until SIGINT/SIGTERM (the supervisor `lab up` starts)",
		Hidden: true,
		Args:   cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			stateDir, err := flags.resolveStateDir()
			if err != nil {
				return err
			}
			stream := os.NewFile(progressFD, "progress")
			defer stream.Close()
			return superviseLab(stateDir, opts, newStreamProgress(stream), func() {
				newStreamProgress(stream).send(progressEvent{Phase: "ready"})
				stream.Close()
			})
		},
	}
	opts.register(cmd)
	return cmd
}

// superviseLab brings the lab up, calls ready, serves until SIGINT or
// SIGTERM, and tears the lab down. A signal during Up aborts it (Up undoes
// its own steps).
func superviseLab(stateDir string, opts *runOptions, progress lab.Progress, ready func()) error {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	l, err := lab.Up(ctx, lab.Options{StateDir: stateDir, LogDir: opts.logDir, Profile: opts.profile, Progress: progress})
	if err != nil {
		return err
	}
	ready()
	<-ctx.Done()
	stop()
	downCtx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	if err := l.Down(downCtx); err != nil {
		return fmt.Errorf("tear down: %w", err)
	}
	return nil
}
