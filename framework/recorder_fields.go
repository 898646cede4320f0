package framework

import (
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"

	"github.com/paritylab/paritylab/lab/assisted/agentapi"
	"github.com/paritylab/paritylab/results"
)

// phasePaths are where the kinds of both flows keep their phase: Machines
// (CAPI and MAPI) status.phase, BareMetalHosts status.provisioning.state,
// AgentClusterInstalls and Agents status.debugInfo.state.
var phasePaths = [][]string{
	{"status", "phase"},
	{"status", "provisioning", "state"},
	{"status", "debugInfo", "state"},
}

func phaseOf(u *unstructured.Unstructured) string {
	for _, p := range phasePaths {
		if v, ok, _ := unstructured.NestedString(u.Object, p...); ok && v != "" {
			return v
		}
	}
	return ""
}

// conditionsOf reads status.conditions, the list both machine APIs, hive
// and assisted use.
func conditionsOf(u *unstructured.Unstructured) []results.ConditionTransition {
	list, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	out := make([]results.ConditionTransition, 0, len(list))
	for _, item := range list {
		m, ok := item.(map[string]any)
		if !ok {
			continue
		}
		c := results.ConditionTransition{Type: str(m["type"]), Status: str(m["status"]), Reason: str(m["reason"]), Message: str(m["message"])}
		if c.Type != "" {
			out = append(out, c)
		}
	}
	return out
}

func str(v any) string {
	s, _ := v.(string)
	return s
}

// appendConditionChanges appends the conditions whose status or reason
// differs from their last recorded transition.
func appendConditionChanges(history, current []results.ConditionTransition, at time.Time) []results.ConditionTransition {
	last := map[string]results.ConditionTransition{}
	for _, c := range history {
		last[c.Type] = c
	}
	for _, c := range current {
		if prev, ok := last[c.Type]; ok && prev.Status == c.Status && prev.Reason == c.Reason {
			continue
		}
		c.At = at
		history = append(history, c)
	}
	return history
}

// noisyAnnotations carry whole objects or bookkeeping, not behaviour.
// The lab version operator's request for a node's kubelet stands in for
// the machine-config operator's bookkeeping; the behaviour it drives, the
// kubelet a Node reports, is what the upgrade scenario records.
var noisyAnnotations = []string{
	"kubectl.kubernetes.io/last-applied-configuration",
	"baremetalhost.metal3.io/status",
	agentapi.DesiredKubeletAnnotation,
}

func scenarioAnnotations(in map[string]string) map[string]string {
	if len(in) == 0 {
		return nil
	}
	out := make(map[string]string, len(in))
	for k, v := range in {
		if !isNoisy(k) {
			out[k] = v
		}
	}
	return out
}

func isNoisy(key string) bool {
	for _, n := range noisyAnnotations {
		if key == n {
			return true
		}
	}
	return strings.HasPrefix(key, "control-plane.alpha.kubernetes.io/")
}

// eventRecord is an Event and the UID of the object it is about.
type eventRecord struct {
	event    results.Event
	involved types.UID
}

func (r *Recorder) observeEvent(o any) {
	u, ok := o.(*unstructured.Unstructured)
	if !ok {
		return
	}
	var ev corev1.Event
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &ev); err != nil {
		return
	}
	at := ev.LastTimestamp.Time
	if at.IsZero() {
		at = ev.EventTime.Time
	}
	if at.IsZero() {
		at = ev.CreationTimestamp.Time
	}
	if at.Before(r.since) {
		return
	}
	ref := ev.InvolvedObject
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events[ev.UID] = &eventRecord{involved: ref.UID, event: results.Event{
		Object: results.ObjectRef{APIVersion: ref.APIVersion, Kind: ref.Kind, Namespace: ref.Namespace, Name: ref.Name},
		Type:   ev.Type, Reason: ev.Reason, Message: ev.Message, Count: int(max(ev.Count, 1)), At: at.UTC(),
	}}
}
