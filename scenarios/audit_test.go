package scenarios

import (
	"slices"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	auditv1 "k8s.io/apiserver/pkg/apis/audit/v1"
)

// Only refused writes to the Node that give the label a value count as
// refused restores, from the run's start on.
func TestRefusedRestores(t *testing.T) {
	start := time.Date(2026, 11, 27, 1, 0, 0, 0, time.UTC)
	event := func(at time.Duration, verb, node, agent string, code int32, body string) auditv1.Event {
		ev := auditv1.Event{Verb: verb, UserAgent: agent, AuditID: "a",
			ObjectRef:                &auditv1.ObjectReference{Resource: "nodes", Name: node},
			ResponseStatus:           &metav1.Status{Code: code},
			RequestReceivedTimestamp: metav1.NewMicroTime(start.Add(at))}
		if body != "" {
			ev.RequestObject = &runtime.Unknown{Raw: []byte(body)}
		}
		return ev
	}
	restore := `{"kind":"Node","metadata":{"name":"w","labels":{"admin":"kept","other":"x"}}}`
	events := []auditv1.Event{
		event(-time.Second, "update", "w", "machine-controller-manager/v0 (x)", 409, restore),          // before the run
		event(time.Second, "update", "w", "machine-controller-manager/v0 (x)", 409, restore),           // counted
		event(2*time.Second, "update", "w", "machine-controller-manager/v0 (x)", 200, restore),         // accepted
		event(3*time.Second, "patch", "w", "kube-controller-manager/v1.34", 409, `{"spec":{}}`),        // no label
		event(4*time.Second, "patch", "w", "nodelink", 409, `{"metadata":{"labels":{"admin":null}}}`),  // removes it
		event(5*time.Second, "update", "other", "machine-controller-manager/v0", 409, restore),         // another Node
		event(6*time.Second, "patch", "w", "x", 409, `[{"op":"add","path":"/metadata/labels/admin"}]`), // a JSON patch
		event(7*time.Second, "patch", "w", "actuator/v1", 422, `{"metadata":{"labels":{"admin":"kept"}}}`),
	}
	got, err := refusedRestores(events, RefusedRestoresInput{Node: "w", Label: "admin", Since: start})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"update by machine-controller-manager: 409 Conflict", "patch by actuator: 422 Unprocessable Entity"}
	if !slices.Equal(got, want) {
		t.Errorf("refused restores %q, want %q", got, want)
	}
}
