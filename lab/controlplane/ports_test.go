package controlplane

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes"

	"github.com/paritylab/paritylab/lab/ports"
)

// takenFirst hands out, for each component, a port another process holds
// before a free one: the race lab/ports warns of, where a port picked free
// is taken before the component binds it.
func takenFirst(t *testing.T) (pick func() (int, error), handedTaken func() int) {
	t.Helper()
	l, err := net.Listen("tcp", net.JoinHostPort(ports.Loopback, "0"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	taken := l.Addr().(*net.TCPAddr).Port
	count, odd := 0, true
	return func() (int, error) {
		defer func() { odd = !odd }()
		if odd {
			count++
			return taken, nil
		}
		return ports.Free()
	}, func() int { return count }
}

// Each component that could not bind the port it was given (etcd,
// kube-apiserver, kube-controller-manager) is started again on a new one,
// and the control plane comes up.
func TestComponentsRetryATakenPort(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	logDir := t.TempDir()
	pick, handedTaken := takenFirst(t)
	cp, err := Start(ctx, Options{Name: "taken", Dir: filepath.Join(t.TempDir(), "cp"), LogDir: logDir, ControllerManager: true, pickPort: pick})
	if err != nil {
		t.Fatalf("start with a taken port offered first to each component: %v", err)
	}
	t.Cleanup(func() { _ = cp.Stop() })
	if n := handedTaken(); n != 3 {
		t.Errorf("the taken port was handed out %d times, want once to each of the 3 components", n)
	}
	cs, err := kubernetes.NewForConfig(cp.RESTConfig())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cs.Discovery().ServerVersion(); err != nil {
		t.Errorf("the API server at %s does not answer: %v", cp.Server(), err)
	}
	raw, err := os.ReadFile(filepath.Join(logDir, "taken-etcd.log"))
	if err != nil || !strings.Contains(string(raw), "address already in use") {
		t.Errorf("etcd's log does not show the failed first bind (%v)", err)
	}
}
