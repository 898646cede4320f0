package framework

import (
	"fmt"
	"time"
)

// LabSuiteRunTime is how long a lab suite (parity, lab self-test) may
// run: the Makefile's E2E_TIMEOUT.
const LabSuiteRunTime = 80 * time.Minute

// CheckRunTime refuses a test binary run whose deadline (testing.T's
// Deadline) comes before a lab suite can finish. go test kills a binary
// at its timeout (10 minutes unless told otherwise): it panics, the
// suite's cleanup never runs, and the lab's processes and domains outlive
// it (`paritylab lab down --state-dir` removes them then). ginkgo runs the
// binary with no deadline and enforces its own --timeout by interrupting
// the suite, which tears the lab down.
func CheckRunTime(deadline time.Time, hasDeadline bool, need time.Duration, now time.Time) error {
	if !hasDeadline {
		return nil
	}
	left := deadline.Sub(now).Round(time.Second)
	if left >= need {
		return nil
	}
	return fmt.Errorf("this suite brings a lab up and runs for up to %s, but the test binary's timeout ends in %s: "+
		"go test would kill it half-way and leave the lab running; run it with ginkgo "+
		"(`go tool ginkgo run ./suites/...`, or the Makefile's e2e targets), or give go test a longer -timeout", need, left)
}
