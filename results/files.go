package results

// File names of a run's parity results in its artifacts directory. The
// suite and `paritylab report` write the same names, so that scripts and
// people find them in one place whichever made them; Prow's Spyglass
// shows junit*.xml artifacts.
const (
	// JUnitFile is the parity matrix as JUnit: one testcase per aspect.
	JUnitFile = "junit.parity.xml"
	// HTMLFile is the report people read.
	HTMLFile = "report.html"
	// MarkdownFile is the report for a PR comment or a job page.
	MarkdownFile = "report.md"
	// SummaryFile is the end-of-run table (WriteSummary), which `make
	// e2e-parity` prints last.
	SummaryFile = "summary.txt"
	// VerdictFile is the verdict and the aspect counts as JSON
	// (WriteVerdict), for scripts that compare runs.
	VerdictFile = "verdict.json"
)
