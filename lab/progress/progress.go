// Package progress renders a lab's step progress (lab.Progress) for
// people, in one format wherever it appears: `paritylab lab up` in a
// terminal and the ginkgo suites that bring a lab up.
package progress

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"time"
)

// Live prints a step's name when it starts and its outcome on the same
// line when it ends, so that a terminal shows which step is running.
// Steps must not overlap (the lab runs them one after the other).
type Live struct {
	mu  sync.Mutex
	out io.Writer
}

// NewLive prints to out.
func NewLive(out io.Writer) *Live { return &Live{out: out} }

// Started implements lab.Progress.
func (p *Live) Started(step string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	fmt.Fprint(p.out, stepColumn(step))
}

// Finished implements lab.Progress.
func (p *Live) Finished(_ string, took time.Duration, err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	fmt.Fprint(p.out, outcome(took, err))
}

// Lines prints one whole line per step when it ends. Where other output
// interleaves (a ginkgo log), a line started and finished minutes later
// would be split; a line written at once is not.
type Lines struct {
	mu  sync.Mutex
	out io.Writer
}

// NewLines prints to out.
func NewLines(out io.Writer) *Lines { return &Lines{out: out} }

// Started implements lab.Progress; Lines says nothing until the step ends.
func (p *Lines) Started(string) {}

// Finished implements lab.Progress.
func (p *Lines) Finished(step string, took time.Duration, err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	fmt.Fprint(p.out, stepColumn(step)+outcome(took, err))
}

// stepColumn is the start of a step's line, padded so outcomes align.
func stepColumn(step string) string { return fmt.Sprintf("  • %-66s", step) }

// outcome ends a step's line: ✓ or ✗ and the duration, and under a failed
// step its error, so that a failure is explained where it happened.
func outcome(took time.Duration, err error) string {
	if err == nil {
		return fmt.Sprintf(" ✓ %s\n", Round(took))
	}
	return fmt.Sprintf(" ✗ %s\n      %s\n", Round(took), strings.ReplaceAll(err.Error(), "\n", "\n      "))
}

// Round shortens a duration for people: milliseconds below a second,
// tenths of a second above.
func Round(d time.Duration) time.Duration {
	if d < time.Second {
		return d.Round(time.Millisecond)
	}
	return d.Round(100 * time.Millisecond)
}
