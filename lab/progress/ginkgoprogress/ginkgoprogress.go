// Package ginkgoprogress shows a lab's progress inside a ginkgo suite:
// bringing a lab of many hosts up takes minutes, which a suite must not
// spend silent. It is apart from package progress so that the CLI does not
// link ginkgo.
package ginkgoprogress

import (
	"io"
	"os"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/ginkgo/v2/types"

	"github.com/paritylab/paritylab/lab"
	"github.com/paritylab/paritylab/lab/progress"
)

// Writer is where a suite's progress goes: GinkgoWriter, so that it is in
// the spec reports, and the terminal as it happens, unless GinkgoWriter
// already streams there. Call it from a running node.
func Writer() io.Writer {
	suite, reporter := ginkgo.GinkgoConfiguration()
	if ginkgoWriterStreams(suite, reporter) {
		return ginkgo.GinkgoWriter
	}
	return io.MultiWriter(ginkgo.GinkgoWriter, os.Stdout)
}

// Lines prints one line per lab step to Writer as the step ends.
func Lines() lab.Progress { return progress.NewLines(Writer()) }

// ginkgoWriterStreams mirrors ginkgo's own choice: GinkgoWriter writes
// through to stdout when verbose and in series, and only buffers (for the
// report) otherwise. Writing to stdout as well then would print each line
// twice.
func ginkgoWriterStreams(suite types.SuiteConfig, reporter types.ReporterConfig) bool {
	return reporter.Verbosity().GTE(types.VerbosityLevelVerbose) && suite.ParallelTotal == 1
}
