package main

import (
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/paritylab/paritylab/results"
)

func newReportCommand() *cobra.Command {
	flags := &parityFlags{}
	var outDir string
	cmd := &cobra.Command{
		Use:   "report <results-dir>",
		Short: "Diff every observation pair in a directory into JUnit, HTML and Markdown",
		Long: `Read every observation (*.json with a paritylab.io/observation schemaVersion)
under a directory, pair them by scenario, diff each pair and write
` + results.JUnitFile + `, ` + results.HTMLFile + ` and ` + results.MarkdownFile + `, the names the parity
suite writes (into --out-dir, default the results directory). A scenario
with one flow missing is a regression. Exits non-zero on a regression or a
stale known divergence.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts, err := flags.options()
			if err != nil {
				return err
			}
			pairs, err := results.LoadDir(args[0])
			if err != nil {
				return err
			}
			if outDir == "" {
				outDir = args[0]
			}
			flags.defaultOutputs(outDir)
			return flags.build(cmd.OutOrStdout(), pairs, opts)
		},
	}
	flags.register(cmd)
	cmd.Flags().StringVar(&outDir, "out-dir", "", "where the reports go unless --junit/--html/--markdown say otherwise (default <results-dir>)")
	return cmd
}

// defaultOutputs fills in the report paths not given by flags.
func (f *parityFlags) defaultOutputs(dir string) {
	for _, o := range []struct {
		path *string
		name string
	}{{&f.junit, results.JUnitFile}, {&f.html, results.HTMLFile}, {&f.markdown, results.MarkdownFile}} {
		if *o.path == "" {
			*o.path = filepath.Join(dir, o.name)
		}
	}
}
