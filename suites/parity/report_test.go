package parity

import (
	"bytes"
	"os"
	"path/filepath"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/paritylab/paritylab/results"
	"github.com/paritylab/paritylab/scenarios"
)

// writeReport diffs every scenario both flows of which left an
// observation and writes, into the artifacts, junit.parity.xml (one
// testcase per aspect, for CI), report.html (for people) and report.md.
// A regression or a stale registry entry fails the suite.
func writeReport(in scenarios.Input) {
	obs := in.Observations.All()
	if len(obs) == 0 {
		return
	}
	pairs, err := results.PairUp(obs)
	Expect(err).NotTo(HaveOccurred())
	report := results.Build(pairs, in.Registry, results.Options{})
	for name, write := range map[string]func(*bytes.Buffer) error{
		"junit.parity.xml": func(b *bytes.Buffer) error { return report.WriteJUnit(b) },
		"report.html":      func(b *bytes.Buffer) error { return report.WriteHTML(b) },
		"report.md":        func(b *bytes.Buffer) error { return report.WriteMarkdown(b) },
	} {
		var b bytes.Buffer
		Expect(write(&b)).To(Succeed(), "render %s", name)
		Expect(os.WriteFile(filepath.Join(in.ArtifactsDir, name), b.Bytes(), 0o640)).To(Succeed())
	}
	var text bytes.Buffer
	Expect(report.WriteText(&text)).To(Succeed())
	GinkgoWriter.Println(text.String())
	AddReportEntry("parity", report.Summary())
	Expect(report.Failed()).To(BeFalse(), "the parity report has regressions or stale entries:\n%s", text.String())
}
