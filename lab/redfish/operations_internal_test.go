package redfish

import (
	"slices"
	"testing"
	"time"
)

// TestOpLogBound fills a small log past its limit: the newest entries
// stay, oldest first.
func TestOpLogBound(t *testing.T) {
	l := newOpLog(3)
	for _, op := range []string{"a", "b", "c", "d", "e"} {
		l.add("sys", op)
	}
	if got := names(l.list("sys", time.Time{})); !slices.Equal(got, []string{"c", "d", "e"}) {
		t.Fatalf("log %v, want [c d e]", got)
	}
	if got := l.list("other", time.Time{}); got == nil || len(got) != 0 {
		t.Fatalf("log of an unknown system %v, want an empty list", got)
	}
}

// TestOpLogClockStep steps the clock back: times stay in log order, so
// since keeps meaning "from this entry on".
func TestOpLogClockStep(t *testing.T) {
	base := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	clock := []time.Time{base, base.Add(-time.Hour), base.Add(time.Second)}
	l := newOpLog(10)
	l.now = func() time.Time { c := clock[0]; clock = clock[1:]; return c }
	for _, op := range []string{"a", "b", "c"} {
		l.add("sys", op)
	}
	ops := l.list("sys", time.Time{})
	if !ops[1].At.Equal(base) || !ops[2].At.Equal(base.Add(time.Second)) {
		t.Fatalf("times %v, want the stepped-back one held at %s", ops, base)
	}
	if got := names(l.list("sys", base)); !slices.Equal(got, []string{"a", "b", "c"}) {
		t.Fatalf("since %s: %v, want [a b c]", base, got)
	}
	if got := names(l.list("sys", base.Add(time.Nanosecond))); !slices.Equal(got, []string{"c"}) {
		t.Fatalf("since just after %s: %v, want [c]", base, got)
	}
}

func names(ops []Operation) []string {
	out := make([]string, len(ops))
	for i, o := range ops {
		out[i] = o.Operation
	}
	return out
}
