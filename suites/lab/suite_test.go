package labsuite

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/paritylab/paritylab/framework"
	"github.com/paritylab/paritylab/lab"
	"github.com/paritylab/paritylab/lab/machines"
	"github.com/paritylab/paritylab/lab/progress/ginkgoprogress"
)

func TestLab(t *testing.T) {
	deadline, ok := t.Deadline()
	if err := framework.CheckRunTime(deadline, ok, framework.LabSuiteRunTime, time.Now()); err != nil {
		t.Fatal(err)
	}
	RegisterFailHandler(Fail)
	RunSpecs(t, "Lab self-test suite")
}

// The shared lab's virtual bare-metal hosts, each at the control-plane
// minimum assisted-service documents (4 cores, 16 GiB, 100 GB), and the
// part each group of specs uses:
//   - hosts 0-2: the ZTP compact cluster (ztpSpecs);
//   - hosts 3-4: the worker pool both machine-management sides scale over,
//     one after the other, so both run on the same hardware;
//   - host 5: the control plane of the cluster the CAPI side installs.
const (
	ztpHosts    = 3
	workerPool  = 2
	capiCPHosts = 1
	suiteHosts  = ztpHosts + workerPool + capiCPHosts
)

// workerPoolHosts are the inventory indexes of the worker pool.
var workerPoolHosts = []int{ztpHosts, ztpHosts + 1}

// capiControlPlaneHost is the inventory index of the CAPI cluster's
// control-plane host.
const capiControlPlaneHost = ztpHosts + workerPool

var suiteHostSpec = machines.HostSpec{VCPUs: 4, MemoryMiB: 16384, DiskGiB: 120}

// capiControlPlaneHostSpec is the CAPI single-node control plane's host:
// assisted-service requires 8 cores of a single-node cluster, as one would
// rack a bigger server for it.
var capiControlPlaneHostSpec = machines.HostSpec{VCPUs: capiSNOCores, MemoryMiB: 16384, DiskGiB: 120}

// shared is the lab every spec of this suite uses; BeforeSuite brings it up.
var shared struct {
	lab      *lab.Lab
	stateDir string
	before   leftovers
}

var _ = BeforeSuite(func(ctx SpecContext) {
	stateDir, err := os.MkdirTemp("", "paritylab-suite-")
	Expect(err).NotTo(HaveOccurred())
	start := time.Now()
	logDir := artifactDir("lab-logs")
	fmt.Fprintf(ginkgoprogress.Writer(), "Bringing the lab up with %d hosts; the lab's log: %s\n", suiteHosts, filepath.Join(logDir, "lab.log"))
	l, err := lab.Up(ctx, lab.Options{StateDir: stateDir, LogDir: logDir, Hosts: suiteHosts, Host: suiteHostSpec,
		HostSizes: map[int]machines.HostSpec{capiControlPlaneHost: capiControlPlaneHostSpec}, Progress: ginkgoprogress.Lines(),
		HostedClusters: true})
	Expect(err).NotTo(HaveOccurred())
	AddReportEntry("lab up", time.Since(start).Round(time.Millisecond).String())
	shared.lab, shared.stateDir = l, stateDir
	shared.before = snapshot(l)
}, NodeTimeout(3*time.Minute))

// AfterSuite tears the shared lab down and proves nothing of it is left.
var _ = AfterSuite(func(ctx SpecContext) {
	if shared.lab == nil {
		return
	}
	Expect(shared.lab.Down(ctx)).To(Succeed())
	expectNothingLeft(shared.before)
	expectLibvirtdReleased()
}, NodeTimeout(3*time.Minute))

// artifactDir is a directory under $ARTIFACTS (Prow) or $ARTIFACT_DIR
// (OpenShift CI), else under the system temp dir.
func artifactDir(name string) string {
	base := os.Getenv("ARTIFACTS")
	if base == "" {
		base = os.Getenv("ARTIFACT_DIR")
	}
	if base == "" {
		base = filepath.Join(os.TempDir(), "paritylab-artifacts")
	}
	dir := filepath.Join(base, name)
	Expect(os.MkdirAll(dir, 0o750)).To(Succeed())
	return dir
}

func timeoutCtx(parent context.Context, d time.Duration) (context.Context, context.CancelFunc) {
	return context.WithTimeout(parent, d)
}
