package results

import (
	"fmt"
	"io"
	"testing"
)

// sixByThirty builds six paired scenarios of at least 30 aspects each from
// the real run's day1 pair (testdata/real), with one more milestone, and a
// regression added in every other scenario.
func sixByThirty(t testing.TB) []Pair {
	t.Helper()
	var pairs []Pair
	for i := range 6 {
		m := readObservation(t, "testdata/real/day1.mapi.json")
		c := readObservation(t, "testdata/real/day1.capi.json")
		for _, o := range []*Observation{m, c} {
			o.Scenario = fmt.Sprintf("scenario-%d", i)
			at := o.FinishedAt
			o.Milestones = append(o.Milestones, Milestone{Name: "settled", Description: "settled", ReachedAt: &at})
		}
		if i%2 == 1 {
			c.Nodes[0].Ready = false
		}
		pairs = append(pairs, Pair{Scenario: m.Scenario, A: m, B: c})
	}
	return pairs
}

func renderAll(r *Report) error {
	for _, write := range []func(io.Writer) error{r.WriteJUnit, r.WriteMarkdown, r.WriteHTML} {
		if err := write(io.Discard); err != nil {
			return err
		}
	}
	return nil
}

// BenchmarkReport6x30 normalises, diffs and renders all three outputs.
func BenchmarkReport6x30(b *testing.B) {
	pairs := sixByThirty(b)
	reg, err := DefaultRegistry()
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for b.Loop() {
		if err := renderAll(mustBuild(b, pairs, reg, DefaultOptions())); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRender6x30 renders JUnit, Markdown and HTML of a built report.
func BenchmarkRender6x30(b *testing.B) {
	reg, err := DefaultRegistry()
	if err != nil {
		b.Fatal(err)
	}
	r := mustBuild(b, sixByThirty(b), reg, DefaultOptions())
	b.ResetTimer()
	for b.Loop() {
		if err := renderAll(r); err != nil {
			b.Fatal(err)
		}
	}
}

// The benchmarks above measure the 6 scenarios × 30 aspects budget; this
// test only proves that the fixture they time has (at least) that shape
// and renders.
func TestReport6x30Renders(t *testing.T) {
	reg, err := DefaultRegistry()
	if err != nil {
		t.Fatal(err)
	}
	r := mustBuild(t, sixByThirty(t), reg, DefaultOptions())
	if err := renderAll(r); err != nil {
		t.Fatal(err)
	}
	if got := len(r.AspectNames()); len(r.Scenarios) != 6 || got < 30 {
		t.Fatalf("want 6 scenarios × at least 30 aspects, got %d × %d", len(r.Scenarios), got)
	}
}
