package progress

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/paritylab/paritylab/lab"
)

var (
	_ lab.Progress = (*Live)(nil)
	_ lab.Progress = (*Lines)(nil)
)

func TestLive(t *testing.T) {
	cases := []struct {
		took time.Duration
		err  error
		want string
	}{
		{took: 1234567 * time.Microsecond, want: " ✓ 1.2s\n"},
		{took: 250400 * time.Microsecond, want: " ✓ 250ms\n"},
		{took: 42 * time.Second, err: errors.New("port 2379 in use"), want: " ✗ 42s\n      port 2379 in use\n"},
		{took: 999400 * time.Microsecond, err: errors.New("two\nlines"), want: " ✗ 999ms\n      two\n      lines\n"},
	}
	for _, c := range cases {
		var out bytes.Buffer
		p := NewLive(&out)
		p.Started("Starting the hub")
		if got := out.String(); got != fmt.Sprintf("  • %-66s", "Starting the hub") {
			t.Errorf("after Started: %q, want the padded step name", got)
		}
		p.Finished("Starting the hub", c.took, c.err)
		if got := out.String(); !strings.HasSuffix(got, c.want) || strings.Count(got, "Starting the hub") != 1 {
			t.Errorf("output %q: want the step once, ending with %q", got, c.want)
		}
	}
}

func TestLinesWritesWholeLinesWhenStepsEnd(t *testing.T) {
	var out bytes.Buffer
	p := NewLines(&out)
	p.Started("Recording the run")
	if out.Len() != 0 {
		t.Fatalf("Lines printed %q when a step started", out.String())
	}
	p.Finished("Recording the run", 250*time.Millisecond, nil)
	p.Started("Creating hosts")
	p.Finished("Creating hosts", 3*time.Second, errors.New("no /dev/kvm"))
	want := fmt.Sprintf("  • %-66s ✓ 250ms\n  • %-66s ✗ 3s\n      no /dev/kvm\n", "Recording the run", "Creating hosts")
	if out.String() != want {
		t.Errorf("Lines printed\n%q\nwant\n%q", out.String(), want)
	}
}
