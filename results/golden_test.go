package results

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"testing"
)

// goldenReport is the report over every example pair under testdata,
// classified with goldenRegistry: the real run's day1 and day2-scale
// passing, a failing scale-sample, a stale and an unexercised entry.
func goldenReport(t testing.TB) *Report {
	t.Helper()
	// The acceptance pair and the real run (testdata/rerun, a second real
	// run, is for the tests that compare two runs).
	var pairs []Pair
	for _, dir := range []string{"testdata/acceptance", realDir} {
		p, err := LoadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		pairs = append(pairs, p...)
	}
	return mustBuild(t, pairs, goldenRegistry(t), DefaultOptions())
}

// goldenRegistry is the built-in registry followed by the entries of
// testdata/registry.yaml.
func goldenRegistry(t testing.TB) *Registry {
	t.Helper()
	reg, err := DefaultRegistry()
	if err != nil {
		t.Fatal(err)
	}
	withSampleScenario(reg)
	extra, err := LoadRegistry("testdata/registry.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range extra.Entries {
		if reg.Entry(e.ID) != nil {
			t.Fatalf("testdata/registry.yaml: entry %s is in the built-in registry already", e.ID)
		}
	}
	return &Registry{APIVersion: RegistryAPIVersion, Declared: extra.Scenarios(), Entries: append(reg.Entries, extra.Entries...)}
}

func TestGoldenJUnit(t *testing.T) {
	var buf bytes.Buffer
	if err := goldenReport(t).WriteJUnit(&buf); err != nil {
		t.Fatal(err)
	}
	checkGolden(t, "report.junit.xml", buf.Bytes())
}

func TestGoldenMarkdown(t *testing.T) {
	var buf bytes.Buffer
	if err := goldenReport(t).WriteMarkdown(&buf); err != nil {
		t.Fatal(err)
	}
	checkGolden(t, "report.md", buf.Bytes())
}

func TestGoldenHTML(t *testing.T) {
	var buf bytes.Buffer
	if err := goldenReport(t).WriteHTML(&buf); err != nil {
		t.Fatal(err)
	}
	checkGolden(t, "report.html", buf.Bytes())
}

func TestGoldenText(t *testing.T) {
	var buf bytes.Buffer
	if err := goldenReport(t).WriteText(&buf); err != nil {
		t.Fatal(err)
	}
	checkGolden(t, "report.txt", buf.Bytes())
}

// checkGolden compares got with testdata/golden/name; -update rewrites it.
func checkGolden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", "golden", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./results -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the golden file (run go test ./results -update and review the diff):\n%s", path, firstDifference(want, got))
	}
}

func firstDifference(want, got []byte) string {
	wl, gl := bytes.Split(want, []byte("\n")), bytes.Split(got, []byte("\n"))
	for i := 0; i < max(len(wl), len(gl)); i++ {
		var w, g []byte
		if i < len(wl) {
			w = wl[i]
		}
		if i < len(gl) {
			g = gl[i]
		}
		if !bytes.Equal(w, g) {
			return "line " + strconv.Itoa(i+1) + ":\n  want: " + string(w) + "\n  got:  " + string(g)
		}
	}
	return ""
}

// The Markdown report carries the HTML report's content but the object
// timelines: run metadata, per scenario its milestones and every aspect
// with its verdict, and says where the timelines are. Structural, so that
// it holds whatever observations the golden data holds.
func TestMarkdownSections(t *testing.T) {
	r := goldenReport(t)
	var buf bytes.Buffer
	if err := r.WriteMarkdown(&buf); err != nil {
		t.Fatal(err)
	}
	md := buf.String()
	want := []string{"## Run\n\n| fact | value |\n", "| date and time (UTC) |", "are in the HTML report only.\n"}
	for _, s := range r.Scenarios {
		want = append(want, "\n### "+s.Scenario+": "+scenarioVerdict(s)+"\n", "| fact | MAPI flow | CAPI flow |")
		for _, a := range s.Aspects {
			want = append(want, "| "+mdCell(a.Aspect)+" | "+mdVerdict(a.Verdict)+" | ")
		}
		for _, m := range milestoneRows(s) {
			want = append(want, "| "+mdCell(m.Name)+": ")
		}
	}
	for _, w := range want {
		if !bytes.Contains([]byte(md), []byte(w)) {
			t.Errorf("markdown lacks %q", w)
		}
	}
}
