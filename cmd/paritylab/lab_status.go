package main

import (
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/paritylab/paritylab/lab"
)

func newLabStatusCommand(flags *labFlags) *cobra.Command {
	return &cobra.Command{
		Use:   "status",
		Short: "Show what a lab runs",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			stateDir, err := flags.resolveStateDir()
			if err != nil {
				return err
			}
			st, err := lab.ReadStatus(cmd.Context(), stateDir)
			if errors.Is(err, lab.ErrNoLab) {
				fmt.Fprintf(cmd.OutOrStdout(), "No lab %q (state dir %s).\n", flags.name, stateDir)
				return nil
			}
			if err != nil {
				return err
			}
			printStatus(cmd.OutOrStdout(), flags.name, st)
			return nil
		},
	}
}

func printStatus(out io.Writer, name string, st *lab.Status) {
	fmt.Fprintf(out, "Lab %q, run %s, profile %s\n", name, st.RunID, st.Profile)
	row := func(k, v string) { fmt.Fprintf(out, "  %-11s %s\n", k+":", v) }
	row("state dir", st.StateDir)
	row("created", fmt.Sprintf("%s (%s ago)", st.Created.Format(time.RFC3339), time.Since(st.Created).Round(time.Second)))
	row("ready", yesNo(st.Ready))
	owner := st.Owner + ", gone (crashed or killed: run 'paritylab lab down')"
	if st.OwnerAlive {
		owner = st.Owner + ", running"
	}
	row("supervisor", owner)
	row("hub", fmt.Sprintf("%s (%s)", st.HubServer, st.HubHealth))
	row("kubeconfig", st.Kubeconfig)
	row("logs", st.LogDir)
	row("resources", summarizeResources(st))
	if st.Registry != "" {
		row("registry", st.Registry)
	}
	if len(st.Hosts) == 0 {
		return
	}
	row("accel", st.Accel)
	row("bmc", st.BMC)
	fmt.Fprintf(out, "\n  %-8s %-6s %-17s %s\n", "HOST", "POWER", "MAC", "BMC ADDRESS")
	for _, h := range st.Hosts {
		fmt.Fprintf(out, "  %-8s %-6s %-17s %s\n", h.Name, h.Power, h.MAC, h.BMCAddress)
	}
}

func summarizeResources(st *lab.Status) string {
	counts := map[string]int{}
	for _, r := range st.Resources {
		counts[r.Kind]++
	}
	kinds := make([]string, 0, len(counts))
	for k, n := range counts {
		kinds = append(kinds, fmt.Sprintf("%d %s", n, k))
	}
	sort.Strings(kinds)
	return fmt.Sprintf("%d (%s)", len(st.Resources), strings.Join(kinds, ", "))
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}
