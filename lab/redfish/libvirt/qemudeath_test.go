package libvirt

import (
	"context"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	golibvirt "libvirt.org/go/libvirt"

	"github.com/paritylab/paritylab/lab/redfish"
)

// QEMU 7.2 under TCG now and then segfaults in a vCPU thread. The server a
// domain stands for did not turn off, so the backend starts the domain
// again, a bounded number of times; a QEMU killed here dies the same way
// (libvirt sees its monitor close).
func TestQEMUThatDiesIsStartedAgain(t *testing.T) {
	logger, lines := capturedLog()
	b := newBMCLogging(t, "pl-qdie", logger, "host-0")
	h, err := b.manager.Host("host-0")
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := b.backend.Reset(ctx, h.UUID, redfish.ResetOn); err != nil {
		t.Fatal(err)
	}
	for restart := 1; restart <= maxQEMURestarts; restart++ {
		pid := killQEMU(t, h.Domain)
		started := waitFor(60*time.Second, func() bool {
			now, err := qemuPID(h.Domain)
			return err == nil && now != pid && domainRunning(b.conn, h.UUID) &&
				strings.Count(strings.Join(lines(), "\n"), "starting it again") == restart
		})
		if !started {
			qemuLog, _ := os.ReadFile("/var/log/libvirt/qemu/" + h.Domain + ".log")
			t.Fatalf("restart %d: the domain was not started again; backend log:\n%s\nQEMU log:\n%s", restart, strings.Join(lines(), "\n"), qemuLog)
		}
	}
	killQEMU(t, h.Domain)
	if !waitFor(30*time.Second, func() bool { return strings.Contains(strings.Join(lines(), "\n"), "leaving it off") }) {
		t.Fatalf("a QEMU that died %d times was started again; backend log:\n%s", maxQEMURestarts+1, strings.Join(lines(), "\n"))
	}
	if sys, err := b.backend.System(ctx, h.UUID); err != nil || sys.PowerState != redfish.PowerOff {
		t.Fatalf("after the restarts ran out: %+v, %v; want off", sys, err)
	}
}

// killQEMU kills the QEMU process of a running domain of this test, by the
// PID libvirt recorded, and returns that PID.
func killQEMU(t *testing.T, domain string) int {
	t.Helper()
	pid, err := qemuPID(domain)
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatalf("kill QEMU %d of %s: %v", pid, domain, err)
	}

	return pid
}

// qemuPID reads the PID of a running domain's QEMU from libvirt's status
// file for it (its pid file can still name the QEMU of a failed start).
func qemuPID(domain string) (int, error) {
	raw, err := os.ReadFile("/var/run/libvirt/qemu/" + domain + ".xml")
	if err != nil {
		return 0, err
	}
	m := domstatusPID.FindSubmatch(raw)
	if m == nil {
		return 0, fmt.Errorf("no pid in libvirt's status of %s", domain)
	}
	return strconv.Atoi(string(m[1]))
}

var domstatusPID = regexp.MustCompile(`<domstatus [^>]*pid='(\d+)'`)

// domainRunning: started and past QEMU's start-up (a domain being
// started is active but paused).
func domainRunning(conn *golibvirt.Connect, uuid string) bool {
	dom, err := conn.LookupDomainByUUIDString(uuid)
	if err != nil {
		return false
	}
	defer dom.Free()
	state, _, err := dom.GetState()
	return err == nil && state == golibvirt.DOMAIN_RUNNING
}
