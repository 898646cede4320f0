package parity

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/paritylab/paritylab/results"
	"github.com/paritylab/paritylab/scenarios"
)

// writeReport diffs every scenario both flows of which left an
// observation and writes into the artifacts: the JUnit of every aspect
// (for CI), the HTML and Markdown reports (for people), verdict.json (for
// scripts comparing runs) and, last, summary.txt, the table `make
// e2e-parity` prints at the end. A regression or a stale registry entry
// fails the suite, after everything is written.
func writeReport(in scenarios.Input) {
	obs := in.Observations.All()
	if len(obs) == 0 {
		GinkgoWriter.Println("No scenario left an observation: no parity report.")
		return
	}
	pairs, err := results.PairUp(obs)
	Expect(err).NotTo(HaveOccurred())
	report, err := results.Build(pairs, in.Registry, in.Options)
	Expect(err).NotTo(HaveOccurred())
	path := func(name string) string { return filepath.Join(in.ArtifactsDir, name) }
	summaryPaths := results.SummaryPaths{HTML: path(results.HTMLFile), Markdown: path(results.MarkdownFile)}
	for _, f := range []struct {
		name  string
		write func(io.Writer) error
	}{
		{results.JUnitFile, report.WriteJUnit},
		{results.HTMLFile, report.WriteHTML},
		{results.MarkdownFile, report.WriteMarkdown},
		{results.VerdictFile, report.WriteVerdict},
		{results.SummaryFile, func(w io.Writer) error { return report.WriteSummary(w, summaryPaths) }},
	} {
		var b bytes.Buffer
		Expect(f.write(&b)).To(Succeed(), "render %s", f.name)
		Expect(os.WriteFile(path(f.name), b.Bytes(), 0o640)).To(Succeed())
	}
	var text bytes.Buffer
	Expect(report.WriteText(&text)).To(Succeed())
	GinkgoWriter.Println(text.String())
	AddReportEntry("parity", report.Summary())
	Expect(report.Failed()).To(BeFalse(), "the parity report has regressions or stale entries:\n%s", text.String())
}

// removeStaleVerdict removes the summary and verdict of an earlier run in
// the same artifacts dir: when this run stops before it writes its own,
// they would pass for its result.
func removeStaleVerdict(dir string) {
	for _, name := range []string{results.SummaryFile, results.VerdictFile} {
		if err := os.Remove(filepath.Join(dir, name)); err != nil && !errors.Is(err, os.ErrNotExist) {
			Expect(err).NotTo(HaveOccurred())
		}
	}
}
