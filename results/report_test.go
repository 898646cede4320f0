package results

import (
	"math"
	"strings"
	"testing"
	"time"
)

// mustBuild builds a report with options the test knows are valid.
func mustBuild(t testing.TB, pairs []Pair, reg *Registry, opts Options) *Report {
	t.Helper()
	r, err := Build(pairs, reg, opts)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func mustCompare(t testing.TB, p Pair, reg *Registry, opts Options) ScenarioResult {
	t.Helper()
	res, err := Compare(p, reg, opts)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// Out-of-range tolerances are errors, never replaced by defaults; the
// zero value gets the defaults only through WithDefaultTolerance.
func TestOptionsValidate(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts Options
		want string
	}{
		{"zero value", Options{}, "duration ratio 0"},
		{"ratio below 1", Options{DurationRatio: 0.9}, "duration ratio 0.9"},
		{"NaN ratio", Options{DurationRatio: math.NaN()}, "duration ratio NaN"},
		{"infinite ratio", Options{DurationRatio: math.Inf(1)}, "finite"},
		{"negative slack", Options{DurationRatio: 1, DurationSlack: -time.Second}, "duration slack -1s"},
	} {
		err := tc.opts.Validate()
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: Validate() = %v, want an error mentioning %q", tc.name, err, tc.want)
		}
		if _, err := Build(nil, nil, tc.opts); err == nil {
			t.Errorf("%s: Build accepted invalid options", tc.name)
		}
	}
	for _, ok := range []Options{DefaultOptions(), {DurationRatio: 1}, Options{AllowStale: true}.WithDefaultTolerance()} {
		if err := ok.Validate(); err != nil {
			t.Errorf("%+v: %v", ok, err)
		}
	}
	if got := (Options{DurationRatio: 2}).WithDefaultTolerance(); got.DurationRatio != 2 || got.DurationSlack != 0 {
		t.Errorf("a tolerance set in part must be left alone: %+v", got)
	}
}

// Duration aspects carry both durations and a note with ratio and delta,
// also when they are within tolerance.
func TestDurationNoteOnParity(t *testing.T) {
	m := readObservation(t, "testdata/acceptance/scale-sample.mapi.json")
	c := readObservation(t, "testdata/acceptance/scale-sample.capi.json")
	a, ok := mustCompare(t, Pair{Scenario: m.Scenario, A: m, B: c}, nil, DefaultOptions()).Aspect("durations/total")
	if !ok || a.Verdict != Parity {
		t.Fatalf("durations/total: %+v", a)
	}
	if a.MAPIDuration == nil || *a.MAPIDuration != 5*time.Minute || a.CAPIDuration == nil || *a.CAPIDuration != 5*time.Minute+30*time.Second {
		t.Errorf("durations not kept: %v / %v", a.MAPIDuration, a.CAPIDuration)
	}
	if !strings.Contains(a.Note, "CAPI/MAPI = 1.10×, CAPI +30s") {
		t.Errorf("note %q lacks ratio and delta", a.Note)
	}
}

// A strict tolerance (ratio 1, no slack) makes any difference a
// regression.
func TestStrictTolerance(t *testing.T) {
	m := readObservation(t, "testdata/acceptance/scale-sample.mapi.json")
	c := readObservation(t, "testdata/acceptance/scale-sample.capi.json")
	a, _ := mustCompare(t, Pair{Scenario: m.Scenario, A: m, B: c}, nil, Options{DurationRatio: 1}).Aspect("durations/total")
	if a.Verdict != Regression {
		t.Fatalf("30s more under a strict tolerance: %+v", a)
	}
}
