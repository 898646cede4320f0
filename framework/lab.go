package framework

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/runtime"
	capiframework "sigs.k8s.io/cluster-api/test/framework"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/paritylab/paritylab/lab"
	"github.com/paritylab/paritylab/lab/assisted"
	"github.com/paritylab/paritylab/lab/machines"
	"github.com/paritylab/paritylab/lab/releases"
)

// Lab is the handle specs use: the hub as a CAPI ClusterProxy, the hosts,
// and where the lab keeps its state and logs.
type Lab struct {
	// Hub is the management cluster.
	Hub capiframework.ClusterProxy
	// Inventory lists the virtual bare-metal hosts.
	Inventory *lab.Inventory
	// Info is what the process that brought the lab up handed on.
	Info LabInfo
	// Local is the lab itself, in the process that brought it up; nil in
	// other ginkgo processes.
	Local *lab.Lab
}

// LabInfo is what SynchronizedBeforeSuite's first function passes to
// every process: enough to reach the lab from anywhere.
type LabInfo struct {
	RunID      string `json:"runID"`
	StateDir   string `json:"stateDir"`
	LogDir     string `json:"logDir"`
	Kubeconfig string `json:"kubeconfig"`
	Accel      string `json:"accel"`
	// ReleaseRepository is <registry host>/<path> of the lab's OpenShift
	// releases; Releases are the releases in it.
	ReleaseRepository string            `json:"releaseRepository"`
	Releases          []releases.Pushed `json:"releases"`
	// MirrorSite is the lab's disconnected site: its source and mirror
	// registries.
	MirrorSite *lab.MirrorSite `json:"mirrorSite,omitempty"`
}

// Release is the lab registry's release of an OpenShift version.
func (i LabInfo) Release(version string) (releases.Pushed, error) {
	return lab.FindRelease(i.Releases, version)
}

// UpInput configures BringUp.
type UpInput struct {
	// ArtifactsDir receives the lab's logs (<dir>/lab-logs).
	ArtifactsDir string
	// Hosts is how many hosts the lab has, all of Host's hardware.
	Hosts int
	Host  machines.HostSpec
	// Logger receives the lab's structured log. Default a JSON log file,
	// LabLogFile(ArtifactsDir).
	Logger logr.Logger
	// Progress hears about each step of bringing the lab up and tearing
	// it down, for people watching (e.g. progress.NewLines); bringing up
	// many hosts takes minutes. Default none.
	Progress lab.Progress
	// MachineController, when set, is the upstream bare-metal machine
	// controller binary the workload clusters' machine APIs run
	// (lab.Options.MachineController); the e2e config's
	// MAPI_MACHINE_CONTROLLER variable.
	MachineController string
	// StateDir is where the lab keeps its state (it must not exist yet);
	// default a new temp dir. TearDown removes it.
	StateDir string
	// HostedClusters runs the lab's HyperShift operator stand-in
	// (lab.Options.HostedClusters), for the HyperShift scenarios.
	HostedClusters bool
}

// broughtUp is the lab of this process, when this process brought it up.
var broughtUp *lab.Lab

// BringUp starts a lab and returns the LabInfo to hand to Attach (the
// first function of SynchronizedBeforeSuite). TearDown removes it.
func BringUp(ctx context.Context, in UpInput) ([]byte, error) {
	stateDir, err := newStateDir(in.StateDir)
	if err != nil {
		return nil, err
	}
	logDir := LabLogDir(in.ArtifactsDir)
	l, err := lab.Up(ctx, lab.Options{StateDir: stateDir, LogDir: logDir, Hosts: in.Hosts, Host: in.Host, Logger: in.Logger, Progress: in.Progress,
		MachineController: in.MachineController, HostedClusters: in.HostedClusters})
	if err != nil {
		os.RemoveAll(stateDir)
		return nil, err
	}
	broughtUp = l
	info := LabInfo{RunID: l.RunID(), StateDir: stateDir, LogDir: logDir, Kubeconfig: l.KubeconfigPath(),
		ReleaseRepository: l.ReleaseRepository(), Releases: l.Releases(), MirrorSite: l.MirrorSite()}
	if inv := l.Inventory(); inv != nil {
		info.Accel = inv.Accel
	}
	return json.Marshal(info)
}

// LabLogDir is where BringUp's lab writes its logs under an artifacts dir.
func LabLogDir(artifactsDir string) string { return filepath.Join(artifactsDir, "lab-logs") }

// LabLogFile is the lab's own log of its steps, the one to follow while
// the lab comes up.
func LabLogFile(artifactsDir string) string { return filepath.Join(LabLogDir(artifactsDir), "lab.log") }

func newStateDir(dir string) (string, error) {
	if dir == "" {
		dir, err := os.MkdirTemp("", "paritylab-suite-")
		if err != nil {
			return "", fmt.Errorf("create lab state dir: %w", err)
		}
		return dir, nil
	}
	if err := os.Mkdir(dir, 0o700); err != nil {
		return "", fmt.Errorf("create lab state dir: %w", err)
	}
	return dir, nil
}

// Attach makes the Lab handle from BringUp's LabInfo (the second function
// of SynchronizedBeforeSuite).
func Attach(data []byte) (*Lab, error) {
	var info LabInfo
	if err := json.Unmarshal(data, &info); err != nil {
		return nil, fmt.Errorf("decode lab info: %w", err)
	}
	scheme, err := Scheme()
	if err != nil {
		return nil, fmt.Errorf("build scheme: %w", err)
	}
	inv, err := lab.ReadInventory(info.StateDir)
	if err != nil {
		return nil, err
	}
	return &Lab{
		Hub:       capiframework.NewClusterProxy("hub", info.Kubeconfig, scheme),
		Inventory: inv,
		Info:      info,
		Local:     broughtUp,
	}, nil
}

// Client is the hub's client.
func (l *Lab) Client() client.Client { return l.Hub.GetClient() }

// Scheme is the scheme of every client the framework makes.
func (l *Lab) Scheme() *runtime.Scheme { return l.Hub.GetScheme() }

// TearDown removes the lab this process brought up, if any. The lab's
// own Down is idempotent and removes every domain, process, port and
// directory it recorded.
func TearDown(ctx context.Context) error {
	if broughtUp == nil {
		return nil
	}
	l := broughtUp
	broughtUp = nil
	stateDir := l.StateDir()
	if err := l.Down(ctx); err != nil {
		return err
	}
	return os.RemoveAll(stateDir)
}

// SpokeAuditLog is the audit log of Node writes of the workload cluster
// the hub's cluster namespace/name installed.
func (l *Lab) SpokeAuditLog(namespace, name string) string {
	return lab.SpokeAuditLog(l.Info.LogDir, assisted.ClusterKey{Namespace: namespace, Name: name})
}
