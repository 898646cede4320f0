package labsuite

import (
	"os/exec"
	"path/filepath"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/onsi/gomega/gbytes"
	"github.com/onsi/gomega/gexec"
	"k8s.io/client-go/tools/clientcmd"
)

// The parity suite, run as CI runs it, interrupted with Ctrl-C while its
// first install is under way: ginkgo runs the suite's cleanup, which
// tears the lab down. Nothing of the lab may remain.
var _ = Describe("interrupting the parity suite", Label("lab", "cli"), func() {
	It("tears the parity suite's lab down on SIGINT during an install and leaves nothing behind", func() {
		bin, err := gexec.CompileTest("github.com/paritylab/paritylab/suites/parity")
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(gexec.CleanupBuildArtifacts)
		config, err := filepath.Abs(filepath.Join("..", "..", "ci", "e2e", "local.yaml"))
		Expect(err).NotTo(HaveOccurred())
		stateDir := filepath.Join(GinkgoT().TempDir(), "parity-lab")
		cmd := exec.Command(bin, "-ginkgo.v", "-ginkgo.label-filter=day1", "-e2e.config="+config,
			"-e2e.artifacts-folder="+GinkgoT().TempDir(), "-e2e.lab-state-dir="+stateDir)
		run, err := gexec.Start(cmd, GinkgoWriter, GinkgoWriter)
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(func() { run.Kill().Wait(time.Minute) })

		By("interrupting once the first cluster installs: VMs, the hub and a workload cluster run")
		Eventually(run.Out).WithTimeout(10 * time.Minute).Should(gbytes.Say(`waiting for the install to publish the admin kubeconfig`))
		kubeconfig, err := clientcmd.LoadFromFile(filepath.Join(stateDir, "kubeconfig"))
		Expect(err).NotTo(HaveOccurred())
		held := snapshotLedger(stateDir, kubeconfig.Clusters[kubeconfig.Contexts[kubeconfig.CurrentContext].Cluster].Server)
		Expect(held.domains).NotTo(BeEmpty(), "the suite's hosts are libvirt domains")
		run.Interrupt()
		Eventually(run).WithTimeout(10 * time.Minute).Should(gexec.Exit())
		Expect(run.ExitCode()).NotTo(BeZero(), "an interrupted run fails")
		Expect(run.Out).To(gbytes.Say(`Interrupted by User`))
		expectNothingLeft(held)
	})
})
