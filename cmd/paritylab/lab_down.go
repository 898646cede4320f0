package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/paritylab/paritylab/lab"
	"github.com/paritylab/paritylab/lab/progress"
)

func newLabDownCommand(flags *labFlags) *cobra.Command {
	return &cobra.Command{
		Use:   "down",
		Short: "Remove everything a lab created, also after a crash",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			stateDir, err := flags.resolveStateDir()
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			start := time.Now()
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
			defer cancel()
			err = lab.Down(ctx, stateDir, progress.NewLive(out))
			if errors.Is(err, lab.ErrNoLab) {
				fmt.Fprintf(out, "No lab %q (state dir %s): nothing to do.\n", flags.name, stateDir)
				return nil
			}
			if err != nil {
				return err
			}
			fmt.Fprintf(out, "Lab %q removed in %s.\n", flags.name, time.Since(start).Round(100*time.Millisecond))
			return nil
		},
	}
}
