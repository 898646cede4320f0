package labsuite

import (
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/onsi/gomega/gbytes"
	"github.com/onsi/gomega/gexec"

	"github.com/paritylab/paritylab/lab/process"
	"github.com/paritylab/paritylab/lab/state"
)

// These specs drive the real CLI in separate processes, as a user would.
var _ = Describe("paritylab lab up and lab down", Label("lab", "cli"), Ordered, func() {
	var cli string

	BeforeAll(func(SpecContext) {
		var err error
		cli, err = gexec.Build("github.com/paritylab/paritylab/cmd/paritylab")
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(gexec.CleanupBuildArtifacts)
	}, NodeTimeout(5*time.Minute))

	run := func(args ...string) *gexec.Session {
		s, err := gexec.Start(exec.Command(cli, args...), GinkgoWriter, GinkgoWriter)
		Expect(err).NotTo(HaveOccurred())
		return s
	}
	newStateDir := func() string {
		dir := filepath.Join(GinkgoT().TempDir(), "lab")
		DeferCleanup(func() { run("lab", "down", "--state-dir", dir).Wait(5 * time.Minute) })
		return dir
	}

	It("brings a lab up in the background, shows it, and removes every trace", func() {
		stateDir := newStateDir()
		up := run("lab", "up", "--hosts", "1", "--state-dir", stateDir)
		Eventually(up).WithTimeout(2 * time.Minute).Should(gexec.Exit(0))
		Expect(up.Out).To(gbytes.Say(`Lab ready in`))
		AddReportEntry("lab up (CLI, detached)", readyTime(up.Out.Contents()))

		status := run("lab", "status", "--state-dir", stateDir)
		Eventually(status).Should(gexec.Exit(0))
		Expect(status.Out).To(gbytes.Say(`ready:\s+yes`))
		Expect(status.Out).To(gbytes.Say(`supervisor:.*running`))
		Expect(status.Out).To(gbytes.Say(`hub:\s+https://127\.0\.0\.1:\d+ \(ok\)`))
		Expect(status.Out).To(gbytes.Say(`host-0\s+Off\s+52:54:00:[0-9a-f:]+\s+redfish-virtualmedia\+http://127\.0\.0\.1:\d+/redfish/v1/Systems/`))

		held := snapshotCLILab(stateDir)
		down := run("lab", "down", "--state-dir", stateDir)
		Eventually(down).WithTimeout(3 * time.Minute).Should(gexec.Exit(0))
		expectNothingLeft(held)
	})

	It("tears a foreground lab down by itself on Ctrl-C (SIGINT)", func() {
		stateDir := newStateDir()
		up := run("lab", "up", "--foreground", "--state-dir", stateDir)
		Eventually(up.Out).WithTimeout(2 * time.Minute).Should(gbytes.Say(`Lab ready in`))
		held := snapshotCLILab(stateDir)
		up.Interrupt()
		Eventually(up).WithTimeout(2 * time.Minute).Should(gexec.Exit(0))
		expectNothingLeft(held)
	})

	It("leaves nothing behind when lab up is killed with SIGKILL while starting", func() {
		stateDir := newStateDir()
		up := run("lab", "up", "--foreground", "--state-dir", stateDir)
		By("killing the supervisor as soon as the hub's processes run")
		Eventually(func() int { return countProcesses(stateDir) }).WithTimeout(time.Minute).
			WithPolling(20 * time.Millisecond).Should(BeNumerically(">=", 1))
		held := snapshotPartial(stateDir)
		up.Signal(syscall.SIGKILL)
		Eventually(up).Should(gexec.Exit())

		down := run("lab", "down", "--state-dir", stateDir)
		Eventually(down).WithTimeout(3 * time.Minute).Should(gexec.Exit(0))
		expectNothingLeft(held)
	})

	It("leaves nothing behind when a ready lab's supervisor is killed with SIGKILL", func() {
		stateDir := newStateDir()
		up := run("lab", "up", "--foreground", "--hosts", "1", "--state-dir", stateDir)
		Eventually(up.Out).WithTimeout(2 * time.Minute).Should(gbytes.Say(`Lab ready in`))
		held := snapshotCLILab(stateDir)
		Expect(held.domains).To(HaveLen(1))
		By("powering the host on, so a QEMU process outlives the supervisor")
		powerOnFirstHost(stateDir)
		up.Signal(syscall.SIGKILL)
		Eventually(up).Should(gexec.Exit())

		status := run("lab", "status", "--state-dir", stateDir)
		Eventually(status).Should(gexec.Exit(0))
		Expect(status.Out).To(gbytes.Say(`supervisor:.*gone`))

		down := run("lab", "down", "--state-dir", stateDir)
		Eventually(down).WithTimeout(3 * time.Minute).Should(gexec.Exit(0))
		expectNothingLeft(held)
	})
})

// snapshotCLILab reads a ready lab's ledger, including its supervisor.
func snapshotCLILab(stateDir string) leftovers {
	ledger, err := state.Open(filepath.Join(stateDir, "ledger.json"))
	Expect(err).NotTo(HaveOccurred())
	held := snapshotLedger(stateDir, ledger.Record().Values["hubServer"])
	var owner process.Identity
	Expect(json.Unmarshal([]byte(ledger.Record().Values["owner"]), &owner)).To(Succeed())
	held.processes = append(held.processes, owner)
	return held
}

// powerOnFirstHost powers the first host of a CLI lab on through its BMC.
func powerOnFirstHost(stateDir string) {
	raw, err := os.ReadFile(filepath.Join(stateDir, "inventory.json"))
	Expect(err).NotTo(HaveOccurred())
	var inv struct {
		BMC             string
		CredentialsFile string
		Hosts           []struct{ UUID string }
	}
	Expect(json.Unmarshal(raw, &inv)).To(Succeed())
	creds, err := os.ReadFile(inv.CredentialsFile)
	Expect(err).NotTo(HaveOccurred())
	user, pass, _ := strings.Cut(strings.TrimSpace(string(creds)), ":")
	req, err := http.NewRequest(http.MethodPost, inv.BMC+"/redfish/v1/Systems/"+inv.Hosts[0].UUID+"/Actions/ComputerSystem.Reset",
		strings.NewReader(`{"ResetType":"On"}`))
	Expect(err).NotTo(HaveOccurred())
	req.SetBasicAuth(user, pass)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	Expect(err).NotTo(HaveOccurred())
	resp.Body.Close()
	Expect(resp.StatusCode).To(Equal(http.StatusNoContent))
}

// snapshotPartial reads whatever a lab still starting has recorded.
func snapshotPartial(stateDir string) leftovers {
	ledger, err := state.Open(filepath.Join(stateDir, "ledger.json"))
	Expect(err).NotTo(HaveOccurred())
	out := leftovers{dirs: []string{stateDir}}
	for _, r := range ledger.Record().Resources {
		if r.Kind == state.KindProcess {
			var id process.Identity
			Expect(json.Unmarshal(r.Data, &id)).To(Succeed())
			out.processes = append(out.processes, id)
		}
	}
	return out
}

func countProcesses(stateDir string) int {
	raw, err := os.ReadFile(filepath.Join(stateDir, "ledger.json"))
	if err != nil {
		return 0
	}
	var rec state.Record
	if json.Unmarshal(raw, &rec) != nil {
		return 0
	}
	n := 0
	for _, r := range rec.Resources {
		if r.Kind == state.KindProcess {
			n++
		}
	}
	return n
}

var readyRE = regexp.MustCompile(`Lab ready in ([0-9.]+m?s)`)

func readyTime(out []byte) string {
	if m := readyRE.FindSubmatch(out); m != nil {
		return string(m[1])
	}
	return "unknown"
}
