// Command soaksummary summarises a soak of the parity suite
// (ci/scripts/soak.sh, `make e2e-parity-soak`): one line per run with its
// outcome, aspect counts and duration, and the number of flakes, the runs
// that failed or whose verdict or counts differ from the first passing
// run. It exits 1 when there is a flake.
//
// Usage: soaksummary <soak dir> <runs>; run <i>'s artifacts are in
// <soak dir>/run-<i>, with the suite's verdict.json and the soak-run.json
// soak.sh writes.
package main

import (
	"fmt"
	"os"
	"strconv"
)

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: soaksummary <soak dir> <runs>")
		os.Exit(2)
	}
	n, err := strconv.Atoi(os.Args[2])
	if err != nil || n < 1 {
		fmt.Fprintf(os.Stderr, "soaksummary: runs %q is not a positive number\n", os.Args[2])
		os.Exit(2)
	}
	s := summarise(loadRuns(os.Args[1], n))
	if err := s.write(os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "soaksummary:", err)
		os.Exit(2)
	}
	if s.flakes > 0 {
		os.Exit(1)
	}
}
