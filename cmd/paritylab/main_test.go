package main

import (
	"fmt"
	"os"
	"testing"
)

// fakeSupervisorEnv makes the test binary, when `lab up` starts it as its
// supervisor (os.Executable), play a supervisor that dies before the lab
// is ready: what it prints to stderr is what `lab up` must show.
const fakeSupervisorEnv = "PARITYLAB_TEST_FAKE_SUPERVISOR"

func TestMain(m *testing.M) {
	if words := os.Getenv(fakeSupervisorEnv); words != "" {
		// Like a real supervisor: the progress stream closes first, the
		// reason comes after.
		os.NewFile(progressFD, "progress").Close()
		fmt.Fprintln(os.Stderr, words)
		os.Exit(1)
	}
	os.Exit(m.Run())
}
