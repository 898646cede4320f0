package scenarios

import (
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// A run that names its Nodes compares those alone; one that names none
// compares every Node.
func TestNamedNodes(t *testing.T) {
	nodes := []corev1.Node{{ObjectMeta: metav1.ObjectMeta{Name: "master-0"}}, {ObjectMeta: metav1.ObjectMeta{Name: "replace-0"}}}
	names := func(ns []corev1.Node) []string {
		var out []string
		for _, n := range ns {
			out = append(out, n.Name)
		}
		return out
	}
	if got := names(namedNodes(nodes, []string{"replace-0"})); !slices.Equal(got, []string{"replace-0"}) {
		t.Errorf("named: %v", got)
	}
	if got := names(namedNodes(nodes, nil)); !slices.Equal(got, []string{"master-0", "replace-0"}) {
		t.Errorf("none named: %v", got)
	}
	if got := namedNodes(nodes, []string{"gone"}); len(got) != 0 {
		t.Errorf("a name no Node has: %v", got)
	}
}

// A run after a set-up starts on a whole second later than the second the
// set-up ended in, and later than a second after it: an event of the
// set-up (time kept to the second) is never of the run's first second.
func TestRunStartAfter(t *testing.T) {
	base := time.Date(2026, 11, 29, 5, 54, 28, 0, time.UTC)
	for _, frac := range []time.Duration{0, time.Millisecond, 465 * time.Millisecond, 999 * time.Millisecond} {
		done := base.Add(frac)
		got := runStartAfter(done)
		if got.Truncate(time.Second) != got {
			t.Errorf("set-up done %s: start %s is not a whole second", done.Format(time.StampMilli), got.Format(time.StampMilli))
		}
		if got.Sub(done) < time.Second || !got.After(done.Truncate(time.Second)) {
			t.Errorf("set-up done %s: start %s is not a second later in a later second", done.Format(time.StampMilli), got.Format(time.StampMilli))
		}
		if got.Sub(done) > 2*time.Second {
			t.Errorf("set-up done %s: start %s waits more than 2s", done.Format(time.StampMilli), got.Format(time.StampMilli))
		}
	}
}
