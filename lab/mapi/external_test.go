package mapi

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/paritylab/paritylab/lab/process"
	"github.com/paritylab/paritylab/lab/state"
)

// standInSeen is the annotation the stand-in machine controller writes
// (testdata/standin-machine-controller).
const standInSeen = "test.paritylab.io/standin-machine-controller"

// With a machine controller binary the lab runs it as a child process
// against the cluster, with upstream's flags (the stand-in refuses others)
// and KUBECONFIG, records it in the ledger, logs it to its file, leaves
// the Machine controller out of its own manager, and stops it on Stop.
func TestExternalMachineControllerRunsInsteadOfThePort(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	e, ledger := externalController(t)
	m := startMachineAPIWith(t, e)
	impl, version := m.MachineController()
	if impl != "github.com/paritylab/paritylab/lab/mapi/testdata/standin-machine-controller" || version == "" {
		t.Errorf("MachineController() = %q %q; want the binary's main package and a version", impl, version)
	}
	procs := processesIn(ledger)
	if len(procs) != 1 {
		t.Fatalf("ledger processes %v; want the machine controller", procs)
	}
	machine := newMachine(t, "external-m", HostSelector{})
	// The cluster label, which MAO's Machine controller requires before
	// it adds its finalizer.
	labels := client.MergeFrom(machine.DeepCopy())
	machine.Labels = map[string]string{ClusterLabel: suite.cluster.InfrastructureName()}
	if err := suite.client.Patch(ctx, machine, labels); err != nil {
		t.Fatal(err)
	}
	poll(ctx, t, "the stand-in sees the Machine", func() bool {
		get(t, machine)
		return machine.Annotations[standInSeen] == "seen"
	})
	// MAO's Machine controller adds its finalizer in its first reconcile;
	// the stand-in had time to see the Machine, so would it.
	time.Sleep(time.Second)
	if get(t, machine); len(machine.Finalizers) != 0 || machine.Annotations[HostAnnotation] != "" {
		t.Errorf("the in-process Machine controller ran too: finalizers %v annotations %v", machine.Finalizers, machine.Annotations)
	}
	if err := m.Stop(); err != nil {
		t.Fatal(err)
	}
	if procs[0].Alive() {
		t.Errorf("machine controller %s still runs after Stop", procs[0])
	}
	if left := processesIn(ledger); len(left) != 0 {
		t.Errorf("ledger still lists %v after Stop", left)
	}
	log, err := os.ReadFile(e.LogPath)
	if err != nil || !strings.Contains(string(log), `watching namespace "openshift-machine-api"`) || !strings.Contains(string(log), "stopping") {
		t.Errorf("machine controller log (%v):\n%s", err, log)
	}
}

// A binary that exits at start fails Start with its log's last lines,
// and leaves no process and no record behind; a path that is no
// executable is refused before anything starts.
func TestExternalMachineControllerThatFailsFailsStart(t *testing.T) {
	e, ledger := externalController(t)
	t.Setenv("PARITYLAB_STANDIN_EXIT", "3")
	// Start wrote the installer's objects before the binary failed.
	t.Cleanup(func() { removeAll(t) })
	_, err := Start(context.Background(), machineAPIOptions(t, e))
	if err == nil || !strings.Contains(err.Error(), "stand-in told to exit with 3") {
		t.Fatalf("Start: %v; want the binary's exit and its log", err)
	}
	if left := processesIn(ledger); len(left) != 0 {
		t.Errorf("ledger lists %v after a failed start", left)
	}
	e.Binary = e.LogPath
	if _, err := Start(context.Background(), machineAPIOptions(t, e)); err == nil || !strings.Contains(err.Error(), "machine controller binary") {
		t.Errorf("Start with a missing binary: %v", err)
	}
}

// externalController builds the stand-in and names it with a ledger.
func externalController(t *testing.T) (*ExternalController, *state.Ledger) {
	t.Helper()
	dir := t.TempDir()
	bin := filepath.Join(dir, "standin-machine-controller")
	out, err := exec.Command("go", "build", "-o", bin, "./testdata/standin-machine-controller").CombinedOutput()
	if err != nil {
		t.Fatalf("build the stand-in machine controller: %v\n%s", err, out)
	}
	ledger, err := state.Create(filepath.Join(dir, "ledger.json"), "test")
	if err != nil {
		t.Fatal(err)
	}
	return &ExternalController{Binary: bin, Kubeconfig: suite.cluster.KubeconfigPath(),
		LogPath: filepath.Join(dir, "logs", "machine-controller.log"), Tracker: ledger, ReadyTimeout: 30 * time.Second}, ledger
}

func machineAPIOptions(t *testing.T, e *ExternalController) Options {
	t.Helper()
	image := filepath.Join(t.TempDir(), "node.iso")
	if err := os.WriteFile(image, []byte("node image"), 0o600); err != nil {
		t.Fatal(err)
	}
	return Options{RESTConfig: suite.cluster.RESTConfig(), NodeImage: image, InfrastructureName: suite.cluster.InfrastructureName(),
		Retry: time.Second, Logger: logr.Discard(), MachineController: e}
}

// startMachineAPIWith runs the machine API with an external machine
// controller; at the end it stops it (again) and removes what it wrote.
func startMachineAPIWith(t *testing.T, e *ExternalController) *MachineAPI {
	t.Helper()
	m, err := Start(context.Background(), machineAPIOptions(t, e))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = m.Stop()
		removeAll(t)
	})
	return m
}

// processesIn lists the processes a ledger records.
func processesIn(l *state.Ledger) []process.Identity {
	var out []process.Identity
	for _, r := range l.Record().Resources {
		if r.Kind == state.KindProcess {
			var id process.Identity
			if err := json.Unmarshal(r.Data, &id); err == nil {
				out = append(out, id)
			}
		}
	}
	return out
}
