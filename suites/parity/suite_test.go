package parity

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/paritylab/paritylab/framework"
	"github.com/paritylab/paritylab/lab/machines"
	"github.com/paritylab/paritylab/lab/progress/ginkgoprogress"
	"github.com/paritylab/paritylab/lab/workload"
	"github.com/paritylab/paritylab/results"
	"github.com/paritylab/paritylab/scenarios"
	"github.com/paritylab/paritylab/scenarios/day1"
	"github.com/paritylab/paritylab/scenarios/day2scale"
	"github.com/paritylab/paritylab/scenarios/disconnected"
	"github.com/paritylab/paritylab/scenarios/hypershift"
	"github.com/paritylab/paritylab/scenarios/replacement"
	"github.com/paritylab/paritylab/scenarios/upgrade"
)

var (
	e2eConfigPath = flag.String("e2e.config", "../../ci/e2e/local.yaml", "e2e config file (CAPI test framework format)")
	artifactsRoot = flag.String("e2e.artifacts-folder", "", "where JUnit, the report, observations and dumps go (default $ARTIFACTS, else a temp dir)")
	labStateDir   = flag.String("e2e.lab-state-dir", "", "directory (not existing yet) for the lab's state; default a new temp dir")
)

func TestParity(t *testing.T) {
	deadline, ok := t.Deadline()
	if err := framework.CheckRunTime(deadline, ok, framework.LabSuiteRunTime, time.Now()); err != nil {
		t.Fatal(err)
	}
	RegisterFailHandler(Fail)
	RunSpecs(t, "Parity suite")
}

// suiteHosts is how many lab hosts the scenarios claim in all: day-1
// installs one cluster per flow, day-2 scale and replacement add worker
// sets on hosts of their own, upgrade a day-2 worker per flow,
// disconnected a cluster and a day-2 worker per flow, HyperShift a pool
// of late-binding hosts per hosted cluster.
const suiteHosts = day1.HostsNeeded + day2scale.HostsNeeded + replacement.HostsNeeded + upgrade.HostsNeeded + disconnected.HostsNeeded +
	hypershift.HostsNeeded

// input is what every scenario gets; filled by SynchronizedBeforeSuite.
var input scenarios.Input

var _ = SynchronizedBeforeSuite(func(ctx SpecContext) []byte {
	cfg := loadConfig()
	// What is wrong with the config or the registry fails now, not after
	// the lab came up and the flows ran.
	_, err := scenarios.ComparisonOptions(cfg)
	Expect(err).NotTo(HaveOccurred())
	reg, err := results.DefaultRegistry()
	Expect(err).NotTo(HaveOccurred())
	Expect(reg.Scenarios()).To(ConsistOf(suiteScenarios), "results/known-divergences.yaml must declare exactly the scenarios this suite runs")
	removeStaleVerdict(artifactsDir())
	start := time.Now()
	fmt.Fprintf(ginkgoprogress.Writer(), "Bringing the lab up with %d hosts; the lab's log: %s\n", suiteHosts, framework.LabLogFile(artifactsDir()))
	data, err := framework.BringUp(ctx, framework.UpInput{ArtifactsDir: artifactsDir(), Hosts: suiteHosts, Host: hostSpec(cfg), StateDir: *labStateDir,
		MachineController: cfg.Variable("MAPI_MACHINE_CONTROLLER", ""), Progress: ginkgoprogress.Lines(), HostedClusters: true})
	Expect(err).NotTo(HaveOccurred())
	AddReportEntry("lab up", time.Since(start).Round(time.Second).String())
	return data
}, func(ctx SpecContext, data []byte) {
	l, err := framework.Attach(data)
	Expect(err).NotTo(HaveOccurred())
	cfg := loadConfig()
	opts, err := scenarios.ComparisonOptions(cfg)
	Expect(err).NotTo(HaveOccurred())
	reg, err := results.DefaultRegistry()
	Expect(err).NotTo(HaveOccurred())
	key, err := scenarios.NewSSHKey()
	Expect(err).NotTo(HaveOccurred())
	servers, err := scenarios.StartCAPIServers(ctx, scenarios.CAPIServersInput{ReleaseRepository: l.Info.ReleaseRepository,
		Releases: l.Info.Releases, Version: cfg.Variable("OPENSHIFT_VERSION", workload.DefaultVersion)})
	Expect(err).NotTo(HaveOccurred())
	input = scenarios.Input{Lab: l, Hosts: framework.NewHostPool(l), Config: cfg, ArtifactsDir: artifactsDir(),
		Observations: &scenarios.Observations{}, Registry: reg, Options: opts, Clusters: &scenarios.Clusters{}, CAPI: servers, SSHKey: key}
}, NodeTimeout(10*time.Minute))

// SynchronizedAfterSuite writes the report of what ran, then tears the lab
// down: also when the run is interrupted (SIGINT), which ginkgo turns into
// running the cleanup nodes.
var _ = SynchronizedAfterSuite(func(ctx SpecContext) {
	if input.CAPI != nil {
		input.CAPI.Close()
	}
	if input.Observations != nil {
		writeReport(input)
	}
}, func(ctx SpecContext) {
	Expect(framework.TearDown(ctx)).To(Succeed())
}, NodeTimeout(10*time.Minute))

// getInput hands scenarios the suite's input once it exists.
func getInput() scenarios.Input { return input }

func loadConfig() *framework.Config {
	cfg, err := framework.LoadConfig(*e2eConfigPath)
	Expect(err).NotTo(HaveOccurred())
	return cfg
}

// hostSpec is every host's virtual hardware, from the e2e config.
func hostSpec(cfg *framework.Config) machines.HostSpec {
	n := func(name, def string) uint {
		v, err := strconv.ParseUint(cfg.Variable(name, def), 10, 32)
		Expect(err).NotTo(HaveOccurred(), "e2e config variable %s must be a number", name)
		return uint(v)
	}
	return machines.HostSpec{VCPUs: n("HOST_CPUS", "4"), MemoryMiB: n("HOST_MEMORY_MIB", "16384"), DiskGiB: uint64(n("HOST_DISK_GIB", "120"))}
}

// artifactsDir is -e2e.artifacts-folder, else $ARTIFACTS (Prow), else
// $ARTIFACT_DIR (OpenShift CI), else a directory under the temp dir.
func artifactsDir() string {
	dir := *artifactsRoot
	for _, env := range []string{"ARTIFACTS", "ARTIFACT_DIR"} {
		if dir == "" {
			dir = os.Getenv(env)
		}
	}
	if dir == "" {
		dir = filepath.Join(os.TempDir(), "paritylab-artifacts")
	}
	abs, err := filepath.Abs(dir)
	Expect(err).NotTo(HaveOccurred())
	Expect(os.MkdirAll(abs, 0o750)).To(Succeed())
	return abs
}

// dumpOnFailure writes every object of the hub and of the flows' workload
// clusters, and the hosts' serial logs, under <artifacts>/dumps/<spec>
// when a spec failed.
func dumpOnFailure(ctx context.Context) {
	report := CurrentSpecReport()
	if !report.Failed() || input.Lab == nil {
		return
	}
	in := framework.DumpInput{Dir: filepath.Join(input.ArtifactsDir, "dumps", specDirName(report.LeafNodeText)),
		Clusters: []framework.DumpCluster{{Name: "hub", RESTConfig: input.Lab.Hub.GetRESTConfig()}}, SerialLogs: map[string]string{}}
	for _, flow := range []results.Flow{results.FlowMAPI, results.FlowCAPI} {
		if c := input.Clusters.Get(flow); c != nil {
			in.Clusters = append(in.Clusters, framework.DumpCluster{Name: "workload-" + string(flow), RESTConfig: c.WorkloadConfig})
		}
	}
	for _, h := range input.Lab.Inventory.Hosts {
		in.SerialLogs[h.Name] = h.SerialLog
	}
	if err := framework.Dump(ctx, in); err != nil {
		GinkgoWriter.Printf("dump after failure: %v\n", err)
	}
}

func specDirName(text string) string {
	out := []rune{}
	for _, r := range text {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-':
			out = append(out, r)
		default:
			out = append(out, '_')
		}
		if len(out) == 80 {
			break
		}
	}
	return string(out)
}
