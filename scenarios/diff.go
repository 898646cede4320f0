package scenarios

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/paritylab/paritylab/results"
)

// DiffSpec declares the spec that diffs a scenario's two flows: every
// aspect that differs must be a registered known divergence. It fails
// with the side-by-side text of each unexplained aspect, and leaves
// <dir>/diff/<scenario>.txt either way.
func DiffSpec(scenario string, inputGetter func() Input) {
	It(DiffSpecText(scenario), func() {
		in := inputGetter()
		sides := results.SidesOf(scenario)
		a := in.Observations.Get(scenario, sides.A)
		b := in.Observations.Get(scenario, sides.B)
		Expect(a).NotTo(BeNil(), "the %s flow of %s left no observation", sides.TitleA, scenario)
		Expect(b).NotTo(BeNil(), "the %s flow of %s left no observation", sides.TitleB, scenario)
		pair, err := results.NewPair(a, b)
		Expect(err).NotTo(HaveOccurred())
		opts := in.Options
		opts.AllowStale = true
		report, err := results.Build([]results.Pair{pair}, in.Registry, opts)
		Expect(err).NotTo(HaveOccurred())
		var text bytes.Buffer
		Expect(report.WriteText(&text)).To(Succeed())
		path := filepath.Join(in.ArtifactsDir, "diff", scenario+".txt")
		Expect(os.MkdirAll(filepath.Dir(path), 0o750)).To(Succeed())
		Expect(os.WriteFile(path, text.Bytes(), 0o640)).To(Succeed())
		counts := report.Counts()
		AddReportEntry(scenario+" aspects", fmt.Sprintf("%d parity, %d known divergences, %d regressions",
			counts.Parity, counts.KnownDivergence, counts.Regression))
		Expect(counts.Regression).To(BeZero(), "unexplained differences (also in %s):\n%s", path, text.String())
	})
}

// FlowSpecText is the text of the spec that runs one flow of the named
// scenarios (more than one when the run is compared as each of them):
// "MAPI flow (replacement-reboot): <what>". Prow and TestGrid know a test
// by its JUnit testcase name, which ginkgo makes of the spec's texts, so
// the names must be unique within the suite and the same run after run:
// scenario names, never anything a run generates.
func FlowSpecText(flow results.Flow, what string, scenarioNames ...string) string {
	return fmt.Sprintf("%s flow (%s): %s", strings.ToUpper(string(flow)), strings.Join(scenarioNames, ", "), what)
}

// DiffSpecText is the text of a scenario's diff spec (see FlowSpecText).
func DiffSpecText(scenario string) string {
	sides := results.SidesOf(scenario)
	return fmt.Sprintf("diff (%s): every difference between the %s and %s flows is a known divergence", scenario, sides.TitleA, sides.TitleB)
}

// KeepObservation builds a flow's observation when its spec ends, passed
// or failed (call it from DeferCleanup), and adds it to the suite's.
func KeepObservation(ctx SpecContext, in Input, finish func(context.Context, bool, string) *results.Observation) {
	report := CurrentSpecReport()
	obs := finish(ctx, report.Failed(), report.FailureMessage())
	Expect(in.Observations.Add(in.ArtifactsDir, obs)).To(Succeed())
}
