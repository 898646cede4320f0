package framework

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/paritylab/paritylab/lab/hub"
	"github.com/paritylab/paritylab/lab/hub/local"
)

// startHub runs a real kube-apiserver and etcd for the test.
func startHub(t *testing.T) (hub.Hub, client.Client) {
	t.Helper()
	h := local.New(local.Options{Dir: t.TempDir()})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := h.Create(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = h.Dispose(context.Background()) })
	scheme, err := Scheme()
	if err != nil {
		t.Fatal(err)
	}
	c, err := client.New(h.RESTConfig(), client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	return h, c
}

// Pods have what the recorder reads of Machines and hosts: a phase, a
// conditions list, events; and no kubelet runs, so the test sets them.
func TestRecorderKeepsTransitionsEventsAndDeletion(t *testing.T) {
	h, c := startHub(t)
	ctx := context.Background()
	ns, err := CreateNamespace(ctx, c, "rec")
	if err != nil {
		t.Fatal(err)
	}
	rec, err := StartRecorder(ctx, RecorderInput{RESTConfig: h.RESTConfig(), EventNamespaces: []string{ns.Name},
		Watches: []Watch{{Resource: corev1.SchemeGroupVersion.WithResource("pods"), Namespace: ns.Name, Role: "machine"}}})
	if err != nil {
		t.Fatal(err)
	}
	defer rec.Stop()

	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "m-0", Namespace: ns.Name, Labels: map[string]string{"pool": "a"}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "none"}}}}
	must(t, c.Create(ctx, pod))
	setPodStatus(t, c, rec, pod, corev1.PodPending, corev1.ConditionFalse)
	setPodStatus(t, c, rec, pod, corev1.PodRunning, corev1.ConditionTrue)
	must(t, c.Create(ctx, &corev1.Event{ObjectMeta: metav1.ObjectMeta{Name: "m-0.1", Namespace: ns.Name},
		InvolvedObject: corev1.ObjectReference{Kind: "Pod", Namespace: ns.Name, Name: pod.Name, UID: pod.UID, APIVersion: "v1"},
		Type:           corev1.EventTypeWarning, Reason: "Unhealthy", Message: "node not ready", Count: 2,
		LastTimestamp: metav1.Now()}))
	must(t, c.Delete(ctx, pod, client.GracePeriodSeconds(0)))

	waitFor(t, "the deletion and the event to be seen", func() bool {
		objs, evs := rec.Objects(), rec.Events()
		return len(objs) == 1 && objs[0].DeletedAt != nil && len(evs) == 1
	})
	obj := rec.Objects()[0]
	if obj.Role != "machine" || obj.Kind != "Pod" || obj.Labels["pool"] != "a" || obj.UID != string(pod.UID) {
		t.Fatalf("recorded object = %+v", obj)
	}
	var phases []string
	for _, p := range obj.Phases {
		phases = append(phases, p.Phase)
	}
	if strings.Join(phases, ",") != "Pending,Running" {
		t.Fatalf("phases = %v, want Pending then Running, each once", phases)
	}
	var ready []string
	for _, cond := range obj.Conditions {
		if cond.Type == string(corev1.PodReady) {
			ready = append(ready, cond.Status)
		}
	}
	if strings.Join(ready, ",") != "False,True" {
		t.Fatalf("Ready transitions = %v, want False then True", ready)
	}
	ev := rec.Events()[0]
	if ev.Role != "machine" || ev.Reason != "Unhealthy" || ev.Count != 2 || ev.Type != corev1.EventTypeWarning {
		t.Fatalf("event = %+v", ev)
	}
}

func TestDumpWritesObjectsButNeverSecrets(t *testing.T) {
	h, c := startHub(t)
	ctx := context.Background()
	ns, err := CreateNamespace(ctx, c, "dump")
	if err != nil {
		t.Fatal(err)
	}
	must(t, c.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "pull-secret", Namespace: ns.Name},
		StringData: map[string]string{"auth": "do-not-dump"}}))
	serial := filepath.Join(t.TempDir(), "host-0.serial")
	must(t, os.WriteFile(serial, []byte("booted\n"), 0o600))

	dir := t.TempDir()
	if err := Dump(ctx, DumpInput{Dir: dir, Clusters: []DumpCluster{{Name: "hub", RESTConfig: h.RESTConfig()}},
		SerialLogs: map[string]string{"host-0": serial}}); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(filepath.Join(dir, "hub", "core", "Namespace", "_cluster", ns.Name+".yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(raw), "name: "+ns.Name) || strings.Contains(string(raw), "managedFields") {
		t.Fatalf("namespace dump:\n%s", raw)
	}
	if got, _ := os.ReadFile(filepath.Join(dir, "serial", "host-0.log")); string(got) != "booted\n" {
		t.Fatalf("serial log copy = %q", got)
	}
	_ = filepath.Walk(dir, func(path string, _ os.FileInfo, _ error) error {
		if body, _ := os.ReadFile(path); strings.Contains(string(body), "do-not-dump") || strings.Contains(path, "pull-secret") {
			t.Errorf("a Secret reached the artifacts: %s", path)
		}
		return nil
	})
}

// setPodStatus sets a phase and waits until the recorder saw it, so that
// every state is observed before the next replaces it.
func setPodStatus(t *testing.T, c client.Client, rec *Recorder, pod *corev1.Pod, phase corev1.PodPhase, ready corev1.ConditionStatus) {
	t.Helper()
	pod.Status.Phase = phase
	pod.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: ready, LastTransitionTime: metav1.Now()}}
	must(t, c.Status().Update(context.Background(), pod))
	waitFor(t, "the recorder to see phase "+string(phase), func() bool {
		objs := rec.Objects()
		return len(objs) == 1 && len(objs[0].Phases) > 0 && objs[0].Phases[len(objs[0].Phases)-1].Phase == string(phase)
	})
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	err := wait.PollUntilContextTimeout(context.Background(), 50*time.Millisecond, 30*time.Second, true,
		func(context.Context) (bool, error) { return cond(), nil })
	if err != nil {
		t.Fatalf("waiting for %s: %v", what, err)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// A run that starts from a set-up watches only what it acts on (a label
// and a field selector) and keeps only the events from its start on.
func TestRecorderSelectorsAndEventsSince(t *testing.T) {
	h, c := startHub(t)
	ctx := context.Background()
	ns, err := CreateNamespace(ctx, c, "sel")
	if err != nil {
		t.Fatal(err)
	}
	pods := corev1.SchemeGroupVersion.WithResource("pods")
	newPod := func(name, pool string) *corev1.Pod {
		pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns.Name, Labels: map[string]string{"pool": pool}},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "none"}}}}
		must(t, c.Create(ctx, pod))
		return pod
	}
	event := func(name string, pod *corev1.Pod, at time.Time) {
		must(t, c.Create(ctx, &corev1.Event{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns.Name},
			InvolvedObject: corev1.ObjectReference{Kind: "Pod", Namespace: ns.Name, Name: pod.Name, UID: pod.UID, APIVersion: "v1"},
			Type:           corev1.EventTypeNormal, Reason: name, LastTimestamp: metav1.NewTime(at)}))
	}
	mine, other := newPod("mine-0", "a"), newPod("other-0", "b")
	start := time.Now()
	event("SetUp", mine, start.Add(-time.Hour))
	rec, err := StartRecorder(ctx, RecorderInput{RESTConfig: h.RESTConfig(), EventNamespaces: []string{ns.Name}, EventsSince: start,
		Watches: []Watch{
			{Resource: pods, Namespace: ns.Name, Role: "machine", LabelSelector: "pool=a"},
			{Resource: pods, Namespace: ns.Name, Role: "one", FieldSelector: "metadata.name=other-0"},
		}})
	if err != nil {
		t.Fatal(err)
	}
	defer rec.Stop()
	newPod("mine-1", "a")
	newPod("other-1", "b")
	event("DuringRun", mine, start)
	event("AboutOther", other, start)
	waitFor(t, "both pods of pool a and the run's events", func() bool {
		return len(rec.Objects()) == 3 && len(rec.Events()) == 2
	})
	var seen []string
	for _, o := range rec.Objects() {
		seen = append(seen, o.Role+":"+o.Name)
	}
	slices.Sort(seen)
	if got := strings.Join(seen, ","); got != "machine:mine-0,machine:mine-1,one:other-0" {
		t.Fatalf("recorded %s, want the pool's pods and the one named", got)
	}
	var reasons []string
	for _, e := range rec.Events() {
		reasons = append(reasons, e.Reason)
	}
	slices.Sort(reasons)
	if got := strings.Join(reasons, ","); got != "AboutOther,DuringRun" {
		t.Fatalf("events %s, want only the run's (not SetUp)", got)
	}
}
