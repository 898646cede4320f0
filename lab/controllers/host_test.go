package controllers

import (
	"context"
	"net"
	"path/filepath"
	"testing"

	"github.com/paritylab/paritylab/lab/controlplane"
	"github.com/paritylab/paritylab/lab/ports"
)

// A webhook port another process took between the pick and the bind (the
// race lab/ports warns of) costs the host one more start on another
// port, not its start.
func TestStartPicksAnotherWebhookPortWhenTaken(t *testing.T) {
	ctx := context.Background()
	cp, err := controlplane.Start(ctx, controlplane.Options{Name: "controllers-test", Dir: filepath.Join(t.TempDir(), "hub")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cp.Stop() })
	l, err := net.Listen("tcp", net.JoinHostPort(ports.Loopback, "0"))
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	taken := l.Addr().(*net.TCPAddr).Port
	picks := 0
	opts := Options{RESTConfig: cp.RESTConfig(), WebhookHost: ports.Loopback, CertDir: t.TempDir(),
		Components: []Component{&CRDsOnly{ComponentName: "nothing"}},
		pickPort: func() (int, error) {
			if picks++; picks == 1 {
				return taken, nil
			}
			return ports.Free()
		}}
	h, err := Start(ctx, opts)
	if err != nil {
		t.Fatalf("start with the first webhook port taken: %v", err)
	}
	defer func() { _ = h.Stop(ctx) }()
	if picks != 2 {
		t.Errorf("%d webhook ports picked, want 2", picks)
	}
	if got := h.Manager().GetWebhookServer().StartedChecker()(nil); got != nil {
		t.Errorf("webhook server not serving: %v", got)
	}
}

func TestPortsTaken(t *testing.T) {
	l, err := net.Listen("tcp", net.JoinHostPort(ports.Loopback, "0"))
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	_, err = net.Listen("tcp", l.Addr().String())
	if !ports.Taken(err) {
		t.Errorf("ports.Taken(%v) = false for a bound port", err)
	}
	if ports.Taken(context.Canceled) {
		t.Error("ports.Taken(context.Canceled) = true")
	}
}
