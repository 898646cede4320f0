package main

import (
	"github.com/spf13/cobra"

	"github.com/paritylab/paritylab/lab"
)

// labFlags are shared by every `lab` subcommand.
type labFlags struct {
	name     string
	stateDir string
}

func (f *labFlags) register(cmd *cobra.Command) {
	cmd.PersistentFlags().StringVar(&f.name, "name", "default", "lab name; selects the default state dir")
	cmd.PersistentFlags().StringVar(&f.stateDir, "state-dir", "", "state dir of the lab (default ${XDG_STATE_HOME:-~/.local/state}/paritylab/<name>)")
}

func (f *labFlags) resolveStateDir() (string, error) {
	if f.stateDir != "" {
		return f.stateDir, nil
	}
	return lab.DefaultStateDir(f.name)
}

func newLabCommand() *cobra.Command {
	flags := &labFlags{}
	cmd := &cobra.Command{
		Use:   "lab",
		Short: "Bring the virtual bare-metal lab up, show it, tear it down",
	}
	flags.register(cmd)
	cmd.AddCommand(newLabUpCommand(flags), newLabRunCommand(flags), newLabStatusCommand(flags), newLabDownCommand(flags), newLabReapCommand())
	return cmd
}
