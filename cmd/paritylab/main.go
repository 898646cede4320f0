// Command paritylab is the lab and results CLI: it brings the virtual
// bare-metal lab up, reports on it and tears it down (`paritylab lab
// ...`), serves the Redfish BMC emulator on its own (`paritylab redfish
// serve`), and diffs observations into parity reports (`paritylab diff`,
// `paritylab report`).
package main

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"
)

func main() {
	if err := newRootCommand().Execute(); err != nil {
		fmt.Fprintln(os.Stderr, "error:", err)
		os.Exit(1)
	}
}

func newRootCommand() *cobra.Command {
	root := &cobra.Command{
		Use:           "paritylab",
		Short:         "Prove that the CAPI agent flow does everything the MAPI flow did",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.AddCommand(newLabCommand())
	root.AddCommand(newDiffCommand(), newReportCommand())
	root.AddCommand(newRedfishCommand())
	return root
}
