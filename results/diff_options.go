package results

import (
	"errors"
	"fmt"
	"math"
	"time"
)

// Default duration tolerance (see Options). The e2e config is the place to
// tune it; these are what `paritylab diff` and DefaultOptions start from.
const (
	DefaultDurationRatio = 1.5
	DefaultDurationSlack = 30 * time.Second
)

// Options tune Compare and Build. The zero value is not valid: a caller
// states its tolerance (DefaultOptions, or WithDefaultTolerance on purpose),
// because a tolerance silently replaced is a verdict nobody chose.
type Options struct {
	// DurationRatio is the largest ratio of the slower to the faster flow's
	// duration that still counts as parity; at least 1 (1 is strict).
	DurationRatio float64
	// DurationSlack is a difference in duration that counts as parity
	// whatever the ratio, so short phases do not flap; at least 0.
	DurationSlack time.Duration
	// AllowStale reports stale registry entries without failing the run.
	AllowStale bool
}

// DefaultOptions are the default tolerance (DefaultDurationRatio,
// DefaultDurationSlack) with stale entries failing the run.
func DefaultOptions() Options {
	return Options{DurationRatio: DefaultDurationRatio, DurationSlack: DefaultDurationSlack}
}

// WithDefaultTolerance returns o with the default duration tolerance when o
// sets none at all (DurationRatio and DurationSlack both zero). A tolerance
// set in part is left as it is, for Validate to judge.
func (o Options) WithDefaultTolerance() Options {
	if o.DurationRatio == 0 && o.DurationSlack == 0 {
		o.DurationRatio, o.DurationSlack = DefaultDurationRatio, DefaultDurationSlack
	}
	return o
}

// Validate tells whether the options are in range: DurationRatio a finite
// number ≥ 1, DurationSlack ≥ 0. Out-of-range values are errors, never
// replaced.
func (o Options) Validate() error {
	var errs []error
	if !(o.DurationRatio >= 1) || math.IsInf(o.DurationRatio, 0) {
		errs = append(errs, fmt.Errorf("duration ratio %v must be a finite number ≥ 1 (1 is strict)", o.DurationRatio))
	}
	if o.DurationSlack < 0 {
		errs = append(errs, fmt.Errorf("duration slack %s must be ≥ 0", o.DurationSlack))
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("invalid comparison options: %w", err)
	}
	return nil
}

// compareDurations tells whether side A's and side B's durations differ
// beyond the tolerance, and notes their ratio and difference either way,
// so timing stays visible on parity too.
func compareDurations(sides Sides, m, c time.Duration, opts Options) (bool, string) {
	delta := c - m
	abs := delta
	if abs < 0 {
		abs = -abs
	}
	tol := fmt.Sprintf("tolerance %.2f× or ±%s", opts.DurationRatio, opts.DurationSlack)
	diff := sides.TitleB + " " + signedDuration(delta)
	if m <= 0 || c <= 0 {
		return abs > opts.DurationSlack, "one flow took no time; " + diff + "; " + tol
	}
	ratio := float64(c) / float64(m)
	note := fmt.Sprintf("%s/%s = %.2f×, %s; %s", sides.TitleB, sides.TitleA, ratio, diff, tol)
	if abs <= opts.DurationSlack {
		return false, note
	}
	return math.Max(ratio, 1/ratio) > opts.DurationRatio, note
}

func signedDuration(d time.Duration) string {
	if d < 0 {
		return "-" + formatDuration(-d)
	}
	return "+" + formatDuration(d)
}
