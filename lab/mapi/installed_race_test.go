package mapi

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	bmov1alpha1 "github.com/metal3-io/baremetal-operator/apis/metal3.io/v1alpha1"
	machinev1beta1 "github.com/openshift/api/machine/v1beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/paritylab/paritylab/lab/assisted"
	"github.com/paritylab/paritylab/lab/workload"
	agentv1beta1 "github.com/paritylab/paritylab/providers/thirdparty/agentinstall/v1beta1"
)

// Regression test of a day-1 hang (issue 13). When the machine API of an
// installed cluster starts, several controllers write its Machines at once
// (the Machine controller adds its finalizer and phase, the actuator its
// annotation). MAO's MachineSet controller adopts an orphan Machine with an
// Update and, when that conflicts, leaves it out of its count. The lab used
// to write the worker Machines itself for the MachineSet to adopt: a
// conflict made the MachineSet create one Machine too many (for which no
// host is free), then delete one at random, often an installed worker,
// whose host it powered off. Upstream the installer writes no worker
// Machine: the MachineSet creates them and assisted-installer's controller
// links each to a worker host. A writer that keeps patching every Machine
// while the machine API starts must change nothing: no Machine beyond the
// installed ones is ever created or deleted, and every worker host stays
// online, consumed by a Running Machine.
func TestInstalledWorkersSurviveConcurrentMachineWrites(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	installed := []assisted.InstalledHost{
		installedHost("race-master-a", agentv1beta1.HostRoleMaster),
		installedHost("race-worker-a", agentv1beta1.HostRoleWorker), installedHost("race-worker-b", agentv1beta1.HostRoleWorker),
	}
	for _, h := range installed {
		readyNode(ctx, t, h.Hostname)
	}
	created := watchMachines(ctx, t)
	stopWriter := patchMachinesContinuously(ctx, t, 20*time.Second)
	startMachineAPI(t, installed)
	stopWriter()

	for _, w := range []string{"race-worker-a", "race-worker-b"} {
		h := &bmov1alpha1.BareMetalHost{}
		pollFor(ctx, t, 2*time.Minute, "worker host "+w+" consumed by a Running Machine", func() bool {
			if suite.client.Get(ctx, client.ObjectKey{Namespace: workload.MachineAPINamespace, Name: w}, h) != nil || h.Spec.ConsumerRef == nil {
				return false
			}
			m := &machinev1beta1.Machine{}
			if suite.client.Get(ctx, client.ObjectKey{Namespace: workload.MachineAPINamespace, Name: h.Spec.ConsumerRef.Name}, m) != nil {
				return false
			}
			return m.Status.Phase != nil && *m.Status.Phase == machinev1beta1.PhaseRunning && m.DeletionTimestamp.IsZero()
		})
		if !h.Spec.Online {
			t.Errorf("worker host %s was powered off (spec.online=false)", w)
		}
	}
	// Give a late scale-up or scale-down the time to show.
	time.Sleep(5 * time.Second)
	ms := WorkerMachineSetName(suite.cluster.InfrastructureName())
	machines := created()
	var names []string
	for _, m := range machines {
		names = append(names, m.Name)
		// The root cause: a worker Machine the MachineSet must adopt.
		if m.Labels[RoleLabel] == "worker" && !createdBy(m, ms) {
			t.Errorf("worker Machine %s was created without its MachineSet %s as controller: the MachineSet has to adopt it, which races", m.Name, ms)
		}
	}
	if len(machines) != len(installed) {
		t.Errorf("%d Machines were created while the machine API started, want one per installed host (%d): %v", len(machines), len(installed), names)
	}
}

func createdBy(m machinev1beta1.Machine, machineSet string) bool {
	ref := metav1.GetControllerOf(&m)
	return ref != nil && ref.Kind == "MachineSet" && ref.Name == machineSet
}

// watchMachines records, from now until the test ends, every Machine of
// the namespace as it was created (the first version a watch delivers).
func watchMachines(ctx context.Context, t *testing.T) func() map[types.UID]machinev1beta1.Machine {
	t.Helper()
	wc, err := client.NewWithWatch(suite.cluster.RESTConfig(), client.Options{Scheme: suite.client.Scheme()})
	if err != nil {
		t.Fatal(err)
	}
	w, err := wc.Watch(ctx, &machinev1beta1.MachineList{}, client.InNamespace(workload.MachineAPINamespace))
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	created := map[types.UID]machinev1beta1.Machine{}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ev := range w.ResultChan() {
			m, ok := ev.Object.(*machinev1beta1.Machine)
			if !ok {
				continue
			}
			mu.Lock()
			if _, seen := created[m.UID]; !seen {
				created[m.UID] = *m.DeepCopy()
			}
			mu.Unlock()
		}
	}()
	t.Cleanup(func() { w.Stop(); <-done })
	return func() map[types.UID]machinev1beta1.Machine {
		mu.Lock()
		defer mu.Unlock()
		out := make(map[types.UID]machinev1beta1.Machine, len(created))
		for k, v := range created {
			out[k] = v
		}
		return out
	}
}

// patchMachinesContinuously patches an annotation onto every Machine of the
// namespace every few milliseconds for d, as the controllers that write
// Machines while the machine API starts do; the returned function waits
// for it to end.
func patchMachinesContinuously(ctx context.Context, t *testing.T, d time.Duration) func() {
	t.Helper()
	wctx, cancel := context.WithTimeout(ctx, d)
	var wg sync.WaitGroup
	for w := range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			patchMachinesUntil(wctx, w)
		}()
	}
	return func() { wg.Wait(); cancel() }
}

func patchMachinesUntil(ctx context.Context, writer int) {
	n := 0
	_ = wait.PollUntilContextCancel(ctx, time.Millisecond, true, func(ctx context.Context) (bool, error) {
		list := &machinev1beta1.MachineList{}
		if suite.client.List(ctx, list, client.InNamespace(workload.MachineAPINamespace)) != nil {
			return false, nil
		}
		for i := range list.Items {
			n++
			patch := []byte(fmt.Sprintf(`{"metadata":{"annotations":{"paritylab.io/concurrent-writer-%d":"%d"}}}`, writer, n))
			_ = suite.client.Patch(ctx, &list.Items[i], client.RawPatch(types.MergePatchType, patch))
		}
		return false, nil
	})
}
