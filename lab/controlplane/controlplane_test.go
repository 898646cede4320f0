package controlplane

import (
	"context"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/paritylab/paritylab/lab/process"
	"github.com/paritylab/paritylab/lab/state"
)

// recorder is a Tracker that remembers what is currently tracked.
type recorder struct{ live map[string]state.Resource }

func (r *recorder) Track(res state.Resource) error  { r.live[res.String()] = res; return nil }
func (r *recorder) Forget(res state.Resource) error { delete(r.live, res.String()); return nil }

func TestControlPlaneLifecycle(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	dir := filepath.Join(t.TempDir(), "cp")
	logDir := t.TempDir()
	if d := os.Getenv("KEEP_LOGS"); d != "" {
		logDir = d
	}
	rec := &recorder{live: map[string]state.Resource{}}
	cp, err := Start(ctx, Options{Name: "test", Dir: dir, LogDir: logDir, ControllerManager: true, Tracker: rec, AuditedResources: []string{"nodes"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cp.Stop() })

	var ids []process.Identity
	for _, p := range cp.processes {
		ids = append(ids, p.Identity())
	}
	if len(ids) != 3 {
		t.Fatalf("want etcd, kube-apiserver and kube-controller-manager, got %v", ids)
	}
	if len(rec.live) != 4 { // three processes and the directory
		t.Fatalf("tracker holds %v, want 3 processes and 1 dir", rec.live)
	}

	cs, err := kubernetes.NewForConfig(cp.RESTConfig())
	if err != nil {
		t.Fatal(err)
	}
	v, err := cs.Discovery().ServerVersion()
	if err != nil {
		t.Fatal(err)
	}
	if v.GitVersion != "v1.34.4" {
		t.Errorf("server version %q, want v1.34.4", v.GitVersion)
	}
	// The controller manager's namespace controller finalizes deleted
	// namespaces; without it they would stay Terminating.
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "goes-away"}}
	if _, err := cs.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := cs.CoreV1().Namespaces().Delete(ctx, ns.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 30*time.Second, "namespace deletion by kube-controller-manager", func() bool {
		_, err := cs.CoreV1().Namespaces().Get(ctx, ns.Name, metav1.GetOptions{})
		return err != nil
	})

	info, err := os.Stat(cp.KubeconfigPath())
	if err != nil || info.Mode().Perm() != 0o600 {
		t.Fatalf("kubeconfig must exist with mode 0600: %v %v", info, err)
	}
	for _, name := range []string{"test-etcd.log", "test-kube-apiserver.log", "test-kube-controller-manager.log"} {
		if _, err := os.Stat(filepath.Join(logDir, name)); err != nil {
			t.Errorf("log file: %v", err)
		}
	}

	checkAuditLog(ctx, t, cp)

	addr := hostPort(t, cp.Server())
	if err := cp.Stop(); err != nil {
		t.Fatal(err)
	}
	for _, id := range ids {
		if id.Alive() {
			t.Errorf("%s still runs after Stop", id)
		}
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("control plane dir still exists after Stop: %v", err)
	}
	if len(rec.live) != 0 {
		t.Errorf("tracker still holds %v after Stop", rec.live)
	}
	if c, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
		c.Close()
		t.Errorf("API server port %s still listens after Stop", addr)
	}
	if err := cp.Stop(); err != nil {
		t.Errorf("second Stop: %v", err)
	}
}

func TestStartFailureCleansUp(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "cp")
	// The binary cache holds no binaries: Start must fail, explain, and
	// leave no directory behind.
	t.Setenv("PARITYLAB_BIN_DIR", t.TempDir())
	_, err := Start(context.Background(), Options{Dir: dir})
	if err == nil {
		t.Fatal("want an error without binaries")
	}
	if _, statErr := os.Stat(dir); !os.IsNotExist(statErr) {
		t.Errorf("dir left behind after failed start: %v", statErr)
	}
}

func hostPort(t *testing.T, server string) string {
	t.Helper()
	u, err := url.Parse(server)
	if err != nil {
		t.Fatal(err)
	}
	return u.Host
}

func waitFor(t *testing.T, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		if cond() {
			return
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Fatalf("timed out waiting for %s", what)
}

// checkAuditLog makes the API server refuse a Node update (a stale
// resourceVersion) and finds it in the audit log with its client's user
// agent, its body and the server's answer; writes to other resources are
// not there.
func checkAuditLog(ctx context.Context, t *testing.T, cp *ControlPlane) {
	t.Helper()
	cfg := cp.RESTConfig()
	cfg.UserAgent = "audit-test/v1"
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	node, err := cs.CoreV1().Nodes().Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "audited"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	stale := node.DeepCopy()
	node.Labels = map[string]string{"first": "write"}
	if _, err := cs.CoreV1().Nodes().Update(ctx, node, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	stale.Labels = map[string]string{"second": "write"}
	if _, err := cs.CoreV1().Nodes().Update(ctx, stale, metav1.UpdateOptions{}); !apierrors.IsConflict(err) {
		t.Fatalf("update from a stale Node: want a conflict, got %v", err)
	}
	events, err := ReadAuditLog(cp.AuditLogPath())
	if err != nil {
		t.Fatal(err)
	}
	var codes []int32
	for _, ev := range events {
		if ev.ObjectRef == nil || ev.ObjectRef.Resource != "nodes" {
			t.Errorf("audit log records %s %s, want Node writes only", ev.Verb, ev.RequestURI)
			continue
		}
		if ev.ObjectRef.Name == "audited" && ev.UserAgent == cfg.UserAgent && ev.ResponseStatus != nil {
			codes = append(codes, ev.ResponseStatus.Code)
			if ev.ResponseStatus.Code == 409 && (ev.RequestObject == nil || !strings.Contains(string(ev.RequestObject.Raw), `"second":"write"`)) {
				t.Errorf("the refused update's audit event does not carry its request body: %v", ev.RequestObject)
			}
		}
	}
	if want := []int32{201, 200, 409}; !slices.Equal(codes, want) {
		t.Errorf("audited answers to the test's Node writes: %v, want %v", codes, want)
	}
}
