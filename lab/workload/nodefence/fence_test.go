package nodefence

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"

	"github.com/paritylab/paritylab/lab/controlplane"
)

const marker = "paritylab.io/admin-label"

// TestFence runs the fence against a real API server: the order it
// chooses between a restoring write read before another writer's, and
// what it leaves behind.
func TestFence(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cp, err := controlplane.Start(ctx, controlplane.Options{Name: "fence", Dir: filepath.Join(t.TempDir(), "cp")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cp.Stop() })
	cfg := cp.RESTConfig()
	cs := kubernetes.NewForConfigOrDie(cfg)

	t.Run("without a fence a write read before another one is refused", func(t *testing.T) {
		recreateNode(ctx, t, cs, "unfenced")
		stale := getNode(ctx, t, cs, "unfenced")
		if err := reportStatus(ctx, cs, "unfenced"); err != nil {
			t.Fatal(err)
		}
		if err := restore(ctx, cs, stale); !apierrors.IsConflict(err) {
			t.Fatalf("restore read before a status write: want a conflict, got %v", err)
		}
	})

	t.Run("restore first", func(t *testing.T) {
		const name = "restore-first"
		createNode(ctx, t, cs, name, map[string]string{marker: "kept"})
		f := startFence(ctx, t, Options{Config: cfg, Node: name, Marker: marker, Mode: RestoreFirst})
		if err := reportStatus(ctx, cs, name); err != nil {
			t.Fatalf("status write to the marked node: %v", err)
		}
		if r := f.Report(); r.Held != 0 {
			t.Fatalf("the fence held %d writes to the node it has not seen recreated", r.Held)
		}

		recreateNode(ctx, t, cs, name)
		stale := getNode(ctx, t, cs, name)
		written := make(chan error, 1)
		go func() { written <- reportStatus(ctx, cs, name) }()
		waitFor(t, "the status write held", func() bool { return f.Report().Held == 1 })
		if err := restore(ctx, cs, stale); err != nil {
			t.Fatalf("restore read before a held status write: %v", err)
		}
		if err := <-written; err != nil {
			t.Fatalf("the held status write, after the restore: %v", err)
		}
		back := getNode(ctx, t, cs, name)
		if back.Labels[marker] != "kept" || len(back.Status.Conditions) == 0 {
			t.Errorf("node after both writes: labels %v, conditions %v; want the marker and the status", back.Labels, back.Status.Conditions)
		}
		want := Report{Restores: 1, Held: 1}
		if r := f.Report(); fmt.Sprint(r) != fmt.Sprint(want) {
			t.Errorf("report %+v, want %+v", r, want)
		}
	})

	t.Run("write before restore", func(t *testing.T) {
		const name = "write-before-restore"
		createNode(ctx, t, cs, name, map[string]string{marker: "kept"})
		f := startFence(ctx, t, Options{Config: cfg, Node: name, Marker: marker, Mode: WriteBeforeRestore})
		recreateNode(ctx, t, cs, name)
		stale := getNode(ctx, t, cs, name)
		if err := restore(ctx, cs, stale); !apierrors.IsConflict(err) {
			t.Fatalf("restore through the fence: want a conflict, got %v", err)
		}
		back := getNode(ctx, t, cs, name)
		if _, ok := back.Labels[marker]; ok {
			t.Errorf("the refused restore left label %s on the node", marker)
		}
		if _, ok := back.Annotations[WriteAnnotation]; ok {
			t.Errorf("the fence left annotation %s on the node", WriteAnnotation)
		}
		if err := restore(ctx, cs, back); err != nil {
			t.Fatalf("a second restore, read after the fence's write: %v", err)
		}
		// A later recreation is not the fence's: nothing held, nothing
		// written before a restore.
		recreateNode(ctx, t, cs, name)
		if err := reportStatus(ctx, cs, name); err != nil {
			t.Fatal(err)
		}
		if err := restore(ctx, cs, getNode(ctx, t, cs, name)); err != nil {
			t.Fatalf("restore of a later recreation: %v", err)
		}
		want := Report{Restores: 2, WrittenBeforeRestore: 1}
		if r := f.Report(); fmt.Sprint(r) != fmt.Sprint(want) {
			t.Errorf("report %+v, want %+v", r, want)
		}
	})

	t.Run("a hold runs out without a restore", func(t *testing.T) {
		const name = "no-restore"
		createNode(ctx, t, cs, name, map[string]string{marker: "kept"})
		f := startFence(ctx, t, Options{Config: cfg, Node: name, Marker: marker, Mode: RestoreFirst, MaxHold: time.Second})
		recreateNode(ctx, t, cs, name)
		if err := reportStatus(ctx, cs, name); err != nil {
			t.Fatalf("status write after its hold ran out: %v", err)
		}
		want := Report{Held: 1, HoldsRunOut: 1}
		if r := f.Report(); fmt.Sprint(r) != fmt.Sprint(want) {
			t.Errorf("report %+v, want %+v", r, want)
		}
	})

	t.Run("stop removes the webhook configuration", func(t *testing.T) {
		const name = "stopped"
		createNode(ctx, t, cs, name, map[string]string{marker: "kept"})
		f, err := Start(ctx, Options{Config: cfg, Node: name, Marker: marker, Mode: RestoreFirst})
		if err != nil {
			t.Fatal(err)
		}
		if err := f.Stop(ctx); err != nil {
			t.Fatal(err)
		}
		_, err = cs.AdmissionregistrationV1().ValidatingWebhookConfigurations().Get(ctx, f.configKey, metav1.GetOptions{})
		if !apierrors.IsNotFound(err) {
			t.Errorf("webhook configuration after Stop: want not found, got %v", err)
		}
		recreateNode(ctx, t, cs, name)
		if err := reportStatus(ctx, cs, name); err != nil {
			t.Errorf("status write with the fence stopped: %v", err)
		}
	})
}

func TestOptionsSayWhatIsMissing(t *testing.T) {
	_, err := Start(context.Background(), Options{Mode: "sometimes"})
	if err == nil {
		t.Fatal("want an error")
	}
	for _, want := range []string{"Config is required", "Node is required", "Marker is required", `Mode "sometimes"`} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
}

func startFence(ctx context.Context, t *testing.T, opts Options) *Fence {
	t.Helper()
	f, err := Start(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := f.Stop(context.Background()); err != nil {
			t.Error(err)
		}
	})
	return f
}

func createNode(ctx context.Context, t *testing.T, cs kubernetes.Interface, name string, labels map[string]string) {
	t.Helper()
	if _, err := cs.CoreV1().Nodes().Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// recreateNode deletes the Node and registers it again without labels,
// as a remediation that deletes the Node and the kubelet do.
func recreateNode(ctx context.Context, t *testing.T, cs kubernetes.Interface, name string) {
	t.Helper()
	if err := cs.CoreV1().Nodes().Delete(ctx, name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
		t.Fatal(err)
	}
	createNode(ctx, t, cs, name, nil)
}

func getNode(ctx context.Context, t *testing.T, cs kubernetes.Interface, name string) *corev1.Node {
	t.Helper()
	n, err := cs.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// reportStatus is a kubelet's status write.
func reportStatus(ctx context.Context, cs kubernetes.Interface, name string) error {
	patch := fmt.Sprintf(`{"status":{"conditions":[{"type":"Ready","status":"True","reason":"KubeletReady","lastHeartbeatTime":%q}]}}`,
		time.Now().UTC().Format(time.RFC3339))
	_, err := cs.CoreV1().Nodes().Patch(ctx, name, types.StrategicMergePatchType, []byte(patch), metav1.PatchOptions{}, "status")
	return err
}

// restore writes the marker back on the Node as read, as OpenShift's
// Metal3Remediation does: one update from its cache.
func restore(ctx context.Context, cs kubernetes.Interface, read *corev1.Node) error {
	n := read.DeepCopy()
	if n.Labels == nil {
		n.Labels = map[string]string{}
	}
	n.Labels[marker] = "kept"
	_, err := cs.CoreV1().Nodes().Update(ctx, n, metav1.UpdateOptions{})
	return err
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		if cond() {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("timed out waiting for %s", what)
}
