package results

import (
	"bytes"
	"slices"
	"testing"

	"github.com/GoogleCloudPlatform/testgrid/metadata/junit"
)

// rerunDir holds the observations of a second real run of every scenario
// (see its README): the dashboards' view of two runs must match.
const rerunDir = "testdata/rerun"

func rerunPairs(t testing.TB) []Pair {
	t.Helper()
	pairs, err := LoadDir(rerunDir)
	if err != nil {
		t.Fatal(err)
	}
	return pairs
}

// TestGrid keys a row on the testcase name: two real runs of the suite
// name the same testcases in junit.parity.xml, each once.
func TestTwoRealRunsNameTheSameTestcases(t *testing.T) {
	first := parityTestcases(t, mustBuild(t, realPairs(t), builtIn(t), DefaultOptions()))
	second := parityTestcases(t, mustBuild(t, rerunPairs(t), builtIn(t), DefaultOptions()))
	if len(first) < 400 {
		t.Fatalf("the real run names %d testcases, fewer than a run of every scenario has", len(first))
	}
	for _, names := range [][]string{first, second} {
		if dup := duplicate(names); dup != "" {
			t.Errorf("testcase name %q is not unique", dup)
		}
	}
	a, b := slices.Sorted(slices.Values(first)), slices.Sorted(slices.Values(second))
	if !slices.Equal(a, b) {
		t.Errorf("the two runs name different testcases:\nonly in %s: %q\nonly in %s: %q", realDir, missingFrom(a, b), rerunDir, missingFrom(b, a))
	}
}

// The verdict is deterministic: the second run reaches the same verdict
// on every aspect of every scenario as the first, but where a race of
// shared components (an intermittent entry) fell another way.
func TestTwoRealRunsReachTheSameVerdicts(t *testing.T) {
	first := mustBuild(t, realPairs(t), builtIn(t), DefaultOptions())
	second := mustBuild(t, rerunPairs(t), builtIn(t), DefaultOptions())
	if second.Failed() {
		t.Errorf("the second run fails: %s", second.Summary())
	}
	verdicts := func(r *Report) map[string]Verdict {
		m := map[string]Verdict{}
		for _, s := range r.Scenarios {
			for _, a := range s.Aspects {
				m[s.Scenario+": "+a.Aspect] = raceless(a)
			}
		}
		return m
	}
	a, b := verdicts(first), verdicts(second)
	for name, v := range a {
		if w, ok := b[name]; ok && w != v {
			t.Errorf("%s: %s in %s, %s in %s", name, v, realDir, w, rerunDir)
		}
	}
}

// raceless is an aspect's verdict with the races of shared components
// taken out: an aspect that intermittent entries alone explain is parity,
// the verdict of a run where each race fell the same way under both
// flows.
func raceless(a AspectResult) Verdict {
	if a.Verdict != KnownDivergence || len(a.Known) == 0 {
		return a.Verdict
	}
	for _, e := range a.Known {
		if e.Intermittent == "" {
			return a.Verdict
		}
	}
	return Parity
}

func parityTestcases(t *testing.T, r *Report) []string {
	t.Helper()
	var buf bytes.Buffer
	if err := r.WriteJUnit(&buf); err != nil {
		t.Fatal(err)
	}
	suites, err := junit.Parse(buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, s := range suites.Suites {
		for _, res := range s.Results {
			names = append(names, res.Name)
		}
	}
	return names
}

func duplicate(names []string) string {
	seen := map[string]bool{}
	for _, n := range names {
		if seen[n] {
			return n
		}
		seen[n] = true
	}
	return ""
}

// missingFrom lists the sorted names of a that b lacks.
func missingFrom(a, b []string) []string {
	var out []string
	for _, n := range a {
		if _, found := slices.BinarySearch(b, n); !found {
			out = append(out, n)
		}
	}
	return out
}
