package main

import (
	"bytes"
	"errors"
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
	def := results.DefaultOptions()
	fl.Float64Var(&f.durationRatio, "duration-ratio", def.DurationRatio, "largest slower/faster duration ratio that counts as parity; at least 1 (1: only --duration-slack tolerates a difference)")
	fl.DurationVar(&f.durationSlack, "duration-slack", def.DurationSlack, "duration difference that counts as parity whatever the ratio; 0 or more")
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

// options are the comparison options the flags ask for. An out-of-range
// value is an error naming its flag: replacing it with a default would
// give a verdict the user did not ask for.
func (f *parityFlags) options() (results.Options, error) {
	var errs []error
	// Each flag on its own over the defaults, so that the error names the
	// flag; the rules are the results package's.
	for _, flag := range []struct {
		name, value string
		set         func(*results.Options)
	}{
		{"--duration-ratio", fmt.Sprint(f.durationRatio), func(o *results.Options) { o.DurationRatio = f.durationRatio }},
		{"--duration-slack", f.durationSlack.String(), func(o *results.Options) { o.DurationSlack = f.durationSlack }},
	} {
		o := results.DefaultOptions()
		flag.set(&o)
		if err := o.Validate(); err != nil {
			errs = append(errs, fmt.Errorf("%s %s: %w", flag.name, flag.value, err))
		}
	}
	if len(errs) > 0 {
		return results.Options{}, errors.Join(errs...)
	}
	opts := results.Options{DurationRatio: f.durationRatio, DurationSlack: f.durationSlack, AllowStale: f.allowStale}
	return opts, opts.Validate()
}

// build diffs the pairs with opts (from options), writes the requested
// files and the terminal summary, and fails when the run does.
func (f *parityFlags) build(out io.Writer, pairs []results.Pair, opts results.Options) error {
	reg, err := f.loadRegistry()
	if err != nil {
		return err
	}
	r, err := results.Build(pairs, reg, opts)
	if err != nil {
		return err
	}
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
		Use:   "diff <side-a.json> <side-b.json>",
		Short: "Diff the two observations of one scenario (MAPI and CAPI, or its sides)",
		Long: `Diff the two observations of a paired scenario aspect by aspect and classify
each as parity, known divergence (explained by the registry) or regression.
The sides are MAPI and CAPI, except for scenarios that compare two CAPI
flows (HyperShift's standard and private CAPI types, or a hosted cluster
before and after its migration); the files may be given in either order.
Prints a summary; --junit, --html and --markdown write reports. Exits
non-zero on a regression or a stale known divergence (see --allow-stale).`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts, err := flags.options()
			if err != nil {
				return err
			}
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
			return flags.build(cmd.OutOrStdout(), []results.Pair{pair}, opts)
		},
	}
	flags.register(cmd)
	return cmd
}
