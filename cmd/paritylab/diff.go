package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"github.com/paritylab/paritylab/results"
)

// parityFlags are the flags `diff` and `report` share.
type parityFlags struct {
	registry      string
	allowStale    bool
	durationRatio float64
	durationSlack time.Duration
	junit         string
	html          string
	markdown      string
}

func (f *parityFlags) register(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.StringVar(&f.registry, "registry", "", "known-divergence registry file (default: the one built in, results/known-divergences.yaml)")
	fl.BoolVar(&f.allowStale, "allow-stale", false, "report stale known divergences without failing")
	fl.Float64Var(&f.durationRatio, "duration-ratio", results.DefaultDurationRatio, "largest slower/faster duration ratio that counts as parity")
	fl.DurationVar(&f.durationSlack, "duration-slack", results.DefaultDurationSlack, "duration difference that counts as parity whatever the ratio")
	fl.StringVar(&f.junit, "junit", "", "write JUnit XML to this file")
	fl.StringVar(&f.html, "html", "", "write the HTML report to this file")
	fl.StringVar(&f.markdown, "markdown", "", "write the Markdown summary to this file")
}

func (f *parityFlags) loadRegistry() (*results.Registry, error) {
	if f.registry == "" {
		return results.DefaultRegistry()
	}
	return results.LoadRegistry(f.registry)
}

func (f *parityFlags) options() results.Options {
	return results.Options{DurationRatio: f.durationRatio, DurationSlack: f.durationSlack, AllowStale: f.allowStale}
}

// build diffs the pairs, writes the requested files and the terminal
// summary, and fails when the run does.
func (f *parityFlags) build(out io.Writer, pairs []results.Pair) error {
	reg, err := f.loadRegistry()
	if err != nil {
		return err
	}
	r := results.Build(pairs, reg, f.options())
	if err := r.WriteText(out); err != nil {
		return err
	}
	for _, o := range []struct {
		path  string
		write func(io.Writer) error
	}{{f.junit, r.WriteJUnit}, {f.markdown, r.WriteMarkdown}, {f.html, r.WriteHTML}} {
		if err := writeOutput(o.path, o.write); err != nil {
			return err
		}
		if o.path != "" {
			fmt.Fprintf(out, "wrote %s\n", o.path)
		}
	}
	if r.Failed() {
		c := r.Counts()
		return fmt.Errorf("parity check failed: %d regression(s), %d stale known divergence(s)", c.Regression, c.Stale)
	}
	return nil
}

// writeOutput renders into memory, then writes path (nothing if empty).
func writeOutput(path string, write func(io.Writer) error) error {
	if path == "" {
		return nil
	}
	var buf bytes.Buffer
	if err := write(&buf); err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("create output dir: %w", err)
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

func newDiffCommand() *cobra.Command {
	flags := &parityFlags{}
	cmd := &cobra.Command{
		Use:   "diff <mapi.json> <capi.json>",
		Short: "Diff the MAPI and CAPI observations of one scenario",
		Long: `Diff the two observations of a paired scenario aspect by aspect and classify
each as parity, known divergence (explained by the registry) or regression.
Prints a summary; --junit, --html and --markdown write reports. Exits
non-zero on a regression or a stale known divergence (see --allow-stale).`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			a, err := results.ReadFile(args[0])
			if err != nil {
				return err
			}
			b, err := results.ReadFile(args[1])
			if err != nil {
				return err
			}
			pair, err := results.NewPair(a, b)
			if err != nil {
				return err
			}
			return flags.build(cmd.OutOrStdout(), []results.Pair{pair})
		},
	}
	flags.register(cmd)
	return cmd
}
