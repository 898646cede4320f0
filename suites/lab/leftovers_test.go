package labsuite

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	. "github.com/onsi/gomega"

	"github.com/paritylab/paritylab/lab"
	"github.com/paritylab/paritylab/lab/libvirtd"
	"github.com/paritylab/paritylab/lab/machines"
	"github.com/paritylab/paritylab/lab/process"
	"github.com/paritylab/paritylab/lab/state"
)

// leftovers is what a lab run holds while it runs: the things teardown must
// remove.
type leftovers struct {
	processes []process.Identity
	dirs      []string
	listeners []string // host:port
	domains   []string // libvirt domain names
	pools     []string // libvirt pool names
}

// snapshot reads what a lab in this process holds from its ledger.
func snapshot(l *lab.Lab) leftovers {
	return snapshotLedger(l.StateDir(), l.RESTConfig().Host)
}

// snapshotLedger reads what the lab recorded in stateDir holds, and the
// address of its hub API server.
func snapshotLedger(stateDir, hubServer string) leftovers {
	ledger, err := state.Open(filepath.Join(stateDir, "ledger.json"))
	Expect(err).NotTo(HaveOccurred())
	var out leftovers
	for _, r := range ledger.Record().Resources {
		switch r.Kind {
		case state.KindProcess:
			var id process.Identity
			Expect(json.Unmarshal(r.Data, &id)).To(Succeed())
			Expect(id.Alive()).To(BeTrue(), "recorded process %s should run", id)
			out.processes = append(out.processes, id)
		case state.KindDir:
			out.dirs = append(out.dirs, r.ID)
		case machines.KindDomain:
			var d struct{ Name string }
			Expect(json.Unmarshal(r.Data, &d)).To(Succeed())
			out.domains = append(out.domains, d.Name)
		case machines.KindPool:
			out.pools = append(out.pools, r.ID)
		}
	}
	Expect(out.processes).NotTo(BeEmpty(), "a running lab records its processes")
	out.dirs = append(out.dirs, stateDir)
	u, err := url.Parse(hubServer)
	Expect(err).NotTo(HaveOccurred())
	out.listeners = append(out.listeners, u.Host)
	st, err := lab.ReadStatus(context.Background(), stateDir)
	Expect(err).NotTo(HaveOccurred())
	Expect(st.Registry).NotTo(BeEmpty(), "a running lab records its release registry's address")
	out.listeners = append(out.listeners, st.Registry)
	return out
}

// expectNothingLeft asserts that every process, directory and port of a
// snapshot is gone.
func expectNothingLeft(s leftovers) {
	for _, id := range s.processes {
		Expect(id.Alive()).To(BeFalse(), "%s still runs after teardown", id)
	}
	for _, d := range s.dirs {
		_, err := os.Stat(d)
		Expect(os.IsNotExist(err)).To(BeTrue(), "directory %s still exists after teardown", d)
	}
	for _, addr := range s.listeners {
		Expect(listening(addr)).To(BeFalse(), "port %s still listens after teardown", addr)
	}
	// Checked without a libvirt daemon (none should run any more): its
	// persistent configuration and QEMU processes.
	for _, d := range s.domains {
		Expect(filepath.Join("/etc/libvirt/qemu", d+".xml")).NotTo(BeAnExistingFile(), "domain %s still defined", d)
		Expect(qemuRuns(d)).To(BeFalse(), "QEMU of domain %s still runs", d)
	}
	for _, p := range s.pools {
		Expect(filepath.Join("/etc/libvirt/storage", p+".xml")).NotTo(BeAnExistingFile(), "pool %s still defined", p)
	}
}

// qemuRuns says whether a QEMU process runs for a libvirt domain (libvirt
// names the guest on QEMU's command line).
func qemuRuns(domain string) bool {
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		cmdline, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err == nil && strings.Contains(string(cmdline), "guest="+domain+",") {
			return true
		}
	}
	return false
}

func listening(addr string) bool {
	c, err := net.Dial("tcp", addr)
	if err != nil {
		return false
	}
	c.Close()
	return true
}

// expectLibvirtdReleased checks the machine's registry of libvirt daemon
// users: this process holds no handle any more, and when no live user is
// left, no daemon paritylab started remains.
func expectLibvirtdReleased() {
	users, err := os.ReadDir(filepath.Join(libvirtd.RegistryDir, "users"))
	if os.IsNotExist(err) {
		return
	}
	Expect(err).NotTo(HaveOccurred())
	self := fmt.Sprintf("%d-", os.Getpid())
	live := 0
	for _, u := range users {
		Expect(u.Name()).NotTo(HavePrefix(self), "this process still holds a libvirtd handle")
		var rec struct{ Owner process.Identity }
		raw, err := os.ReadFile(filepath.Join(libvirtd.RegistryDir, "users", u.Name()))
		if err == nil && json.Unmarshal(raw, &rec) == nil && rec.Owner.Alive() {
			live++
		}
	}
	if live > 0 {
		return // another paritylab process (a parallel test run) uses it
	}
	raw, err := os.ReadFile(filepath.Join(libvirtd.RegistryDir, "daemon.json"))
	if os.IsNotExist(err) {
		return
	}
	Expect(err).NotTo(HaveOccurred())
	var rec struct{ Processes []process.Identity }
	Expect(json.Unmarshal(raw, &rec)).To(Succeed())
	for _, id := range rec.Processes {
		Expect(id.Alive()).To(BeFalse(), "%s started by the lab still runs with no user left", id)
	}
}
