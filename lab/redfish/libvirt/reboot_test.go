package libvirt

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	golibvirt "libvirt.org/go/libvirt"

	"github.com/paritylab/paritylab/lab/machines"
	"github.com/paritylab/paritylab/lab/redfish"
)

// A guest that reboots with changed boot settings is restarted cold (off,
// then on) by the backend. A real server's BMC reports it on throughout a
// reboot; the restart must not show as a moment of power off, or a
// bare-metal operator polling then powers the host on itself, an extra
// power action that depends on when it polled.
func TestColdRestartNeverShowsPowerOff(t *testing.T) {
	conn := testDriver(t)
	id := defineHost(t, conn, "pl-r", "host-0")
	b := newBackend(t, conn, "pl-r")
	ctx := context.Background()
	if err := b.Reset(ctx, id, redfish.ResetOn); err != nil {
		t.Fatal(err)
	}
	var off atomic.Int32
	var wg sync.WaitGroup
	stop := make(chan struct{})
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			if sys, err := b.System(ctx, id); err == nil && sys.PowerState == redfish.PowerOff {
				off.Add(1)
			}
		}
	}()
	for range 200 {
		// A "once" override set while the domain runs: the next guest
		// reboot restarts it cold to spend it.
		if err := b.SetBoot(ctx, id, redfish.BootPatch{Target: redfish.BootTargetCd, Enabled: redfish.BootOnce}); err != nil {
			t.Fatal(err)
		}
		b.rebooted(id)
	}
	close(stop)
	wg.Wait()
	if n := off.Load(); n > 0 {
		t.Fatalf("the system reported power off %d times during cold restarts", n)
	}
	if sys, _ := b.System(ctx, id); sys.PowerState != redfish.PowerOn {
		t.Fatalf("after the restarts: %s", sys.PowerState)
	}
}

// QEMU sometimes fails to start a domain right after it was stopped (the
// old process still holds its disk). A cold restart tries again, so the
// server comes back on and its "once" override is spent exactly once.
func TestColdRestartRetriesAFailedStart(t *testing.T) {
	conn := testDriver(t)
	id := defineHost(t, conn, "pl-s", "host-0")
	b := newBackend(t, conn, "pl-s")
	b.restartWaits = []time.Duration{0, 0, 0}
	ctx := context.Background()
	if err := b.Reset(ctx, id, redfish.ResetOn); err != nil {
		t.Fatal(err)
	}
	if err := b.SetBoot(ctx, id, redfish.BootPatch{Target: redfish.BootTargetCd, Enabled: redfish.BootOnce}); err != nil {
		t.Fatal(err)
	}
	failures := 2
	b.powerOn = func(conn *golibvirt.Connect, uuid string) error {
		if failures > 0 {
			failures--
			return errors.New("internal error: process exited while connecting to monitor")
		}
		return machines.PowerOn(conn, uuid)
	}
	b.rebooted(id)
	sys, err := b.System(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if sys.PowerState != redfish.PowerOn || sys.Boot.Enabled != redfish.BootDisabled {
		t.Fatalf("after a cold restart whose first two starts failed: power %s, boot %+v", sys.PowerState, sys.Boot)
	}
	if failures != 0 {
		t.Fatalf("%d failures left: the restart did not try again", failures)
	}
}

// A domain that stops by itself (here a guest power-off) is logged with
// libvirt's reason; a power off through the BMC (a destroy) is not.
func TestDomainStoppingByItselfIsLogged(t *testing.T) {
	conn := testDriver(t)
	id := defineHost(t, conn, "pl-s", "host-0")
	logger, lines := capturedLog()
	b, err := New(Options{Conn: conn, RunID: "pl-s", Logger: logger})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	ctx := context.Background()
	if err := b.Reset(ctx, id, redfish.ResetOn); err != nil {
		t.Fatal(err)
	}
	if err := b.Reset(ctx, id, redfish.ResetForceOff); err != nil {
		t.Fatal(err)
	}
	if err := b.Reset(ctx, id, redfish.ResetOn); err != nil {
		t.Fatal(err)
	}
	dom, err := conn.LookupDomainByUUIDString(id)
	if err != nil {
		t.Fatal(err)
	}
	defer dom.Free()
	if err := dom.Shutdown(); err != nil {
		t.Fatal(err)
	}
	if !waitFor(10*time.Second, func() bool { return len(lines()) > 0 }) {
		t.Fatal("a guest power-off was not logged")
	}
	got := lines()
	if len(got) != 1 || !strings.Contains(got[0], `"Domain stopped by itself"`) || !strings.Contains(got[0], "shutdown") {
		t.Fatalf("logged %q, want one line for the guest's shutdown and none for the BMC's power off", got)
	}
	// A guest that powered itself off is a server that is off.
	if sys, err := b.System(ctx, id); err != nil || sys.PowerState != redfish.PowerOff {
		t.Fatalf("after the guest's power-off: %+v, %v; want off", sys, err)
	}
}

// A QEMU that died is started again, unless the client asked for a power
// action after it died: that action stands.
func TestQEMUDeathYieldsToLaterPowerActions(t *testing.T) {
	conn := testDriver(t)
	id := defineHost(t, conn, "pl-q", "host-0")
	b := newBackend(t, conn, "pl-q")
	ctx := context.Background()
	died := time.Now()
	if err := b.Reset(ctx, id, redfish.ResetForceOff); err != nil {
		t.Fatal(err)
	}
	b.qemuDied(id, died)
	if sys, _ := b.System(ctx, id); sys.PowerState != redfish.PowerOff {
		t.Fatalf("a domain powered off after its QEMU died was started again: %s", sys.PowerState)
	}
	b.qemuDied(id, time.Now())
	if sys, _ := b.System(ctx, id); sys.PowerState != redfish.PowerOn {
		t.Fatalf("a domain whose QEMU died is %s, want on again", sys.PowerState)
	}
}

// capturedLog is a logger and what it logged so far, one line per entry.
func capturedLog() (logr.Logger, func() []string) {
	var mu sync.Mutex
	var logged []string
	logger := funcr.New(func(_, args string) {
		mu.Lock()
		defer mu.Unlock()
		logged = append(logged, args)
	}, funcr.Options{})
	return logger, func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), logged...)
	}
}
