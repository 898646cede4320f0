package labsuite

import (
	"encoding/json"
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"

	. "github.com/onsi/gomega"

	"github.com/paritylab/paritylab/lab"
	"github.com/paritylab/paritylab/lab/process"
	"github.com/paritylab/paritylab/lab/state"
)

// leftovers is what a lab run holds while it runs: the things teardown must
// remove.
type leftovers struct {
	processes []process.Identity
	dirs      []string
	listeners []string // host:port
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
		}
	}
	Expect(out.processes).NotTo(BeEmpty(), "a running lab records its processes")
	out.dirs = append(out.dirs, stateDir)
	u, err := url.Parse(hubServer)
	Expect(err).NotTo(HaveOccurred())
	out.listeners = append(out.listeners, u.Host)
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
}

func listening(addr string) bool {
	c, err := net.Dial("tcp", addr)
	if err != nil {
		return false
	}
	c.Close()
	return true
}

func describe(s leftovers) string {
	return fmt.Sprintf("%d processes, %d dirs, %d ports", len(s.processes), len(s.dirs), len(s.listeners))
}
