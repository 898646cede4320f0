package main

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/paritylab/paritylab/lab/libvirtd"
	"github.com/paritylab/paritylab/lab/machines"
)

func newLabReapCommand() *cobra.Command {
	var dryRun bool
	cmd := &cobra.Command{
		Use:   "reap",
		Short: "Remove libvirt domains and pools of lab runs whose owner died",
		Long: `Remove what crashed lab runs left in libvirt when their state dir (and
ledger) is gone too: domains whose paritylab metadata names an owner process
that no longer runs, and lab pools whose run has no live owner. Live labs
and anything without paritylab metadata are never touched. 'lab down' is the
normal way to remove a lab; this is for what it cannot find.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			logDir, err := os.MkdirTemp("", "paritylab-reap-")
			if err != nil {
				return err
			}
			defer os.RemoveAll(logDir)
			d, err := libvirtd.Ensure(cmd.Context(), libvirtd.Options{LogDir: logDir})
			if err != nil {
				return err
			}
			defer d.Stop()
			conn, err := d.Connect()
			if err != nil {
				return err
			}
			defer conn.Close()
			orphans, err := machines.FindOrphans(conn)
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			if len(orphans) == 0 {
				fmt.Fprintln(out, "No orphaned lab domains or pools.")
				return nil
			}
			for _, o := range orphans {
				fmt.Fprintf(out, "  %s\n", o)
			}
			if dryRun {
				fmt.Fprintf(out, "%d orphans found; not removed (--dry-run).\n", len(orphans))
				return nil
			}
			if err := machines.RemoveOrphans(conn, orphans); err != nil {
				return err
			}
			fmt.Fprintf(out, "%d orphans removed.\n", len(orphans))
			return nil
		},
	}
	cmd.Flags().BoolVar(&dryRun, "dry-run", false, "only list what would be removed")
	return cmd
}
