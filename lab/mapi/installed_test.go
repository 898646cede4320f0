package mapi

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/go-logr/logr"
	bmov1alpha1 "github.com/metal3-io/baremetal-operator/apis/metal3.io/v1alpha1"
	machinev1beta1 "github.com/openshift/api/machine/v1beta1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/paritylab/paritylab/lab/assisted"
	"github.com/paritylab/paritylab/lab/workload"
	agentv1beta1 "github.com/paritylab/paritylab/providers/thirdparty/agentinstall/v1beta1"
)

// After an install of 3 masters and 2 workers, the machine API started by
// Start (MAO's Machine, MachineSet and nodelink controllers, our actuator,
// the lab's bare-metal operator and installer controller) finds the
// installer's objects: master Machines Running and linked to their Nodes
// by nodelink, the worker MachineSet's 2 Machines linked to the two
// installed worker hosts, hosts left unmanaged, the MachineSet at 2 of 2.
// A day-2 host gets its BareMetalHost and an ownerless Machine, Running
// too.
func TestInstalledHostsMachines(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	infra := suite.cluster.InfrastructureName()
	installed := []assisted.InstalledHost{
		installedHost("inst-master-a", agentv1beta1.HostRoleMaster), installedHost("inst-master-b", agentv1beta1.HostRoleMaster),
		installedHost("inst-master-c", agentv1beta1.HostRoleMaster),
		installedHost("inst-worker-a", agentv1beta1.HostRoleWorker), installedHost("inst-worker-b", agentv1beta1.HostRoleWorker),
	}
	for _, h := range installed {
		readyNode(ctx, t, h.Hostname)
	}
	m := startMachineAPI(t, installed)
	msName := WorkerMachineSetName(infra)

	for i, name := range []string{"inst-master-a", "inst-master-b", "inst-master-c"} {
		expectLinked(ctx, t, MasterMachineName(infra, i), name, name)
		expectInstallerHost(ctx, t, name)
	}
	var workers []machinev1beta1.Machine
	pollFor(ctx, t, time.Minute, "the worker MachineSet's 2 Machines each on an installed worker host", func() bool {
		workers = machinesOf(ctx, t, msName)
		for _, w := range workers {
			if w.Annotations[HostAnnotation] == "" {
				return false
			}
		}
		return len(workers) == 2
	})
	for _, w := range workers {
		host := w.Annotations[HostAnnotation][len(workload.MachineAPINamespace)+1:]
		expectLinked(ctx, t, w.Name, host, host)
		expectInstallerHost(ctx, t, host)
	}
	poll(ctx, t, "the worker MachineSet reports 2 replicas, 2 ready, and owns both workers", func() bool {
		ms := &machinev1beta1.MachineSet{}
		_ = suite.client.Get(ctx, client.ObjectKey{Namespace: workload.MachineAPINamespace, Name: msName}, ms)
		owned := 0
		for _, w := range machinesOf(ctx, t, msName) {
			if ref := metav1.GetControllerOf(&w); ref != nil && ref.Kind == "MachineSet" && ref.Name == msName {
				owned++
			}
		}
		return ms.Spec.Replicas != nil && *ms.Spec.Replicas == 2 && ms.Status.Replicas == 2 && ms.Status.ReadyReplicas == 2 && owned == 2
	})
	// The MachineSet controller has reconciled at 2 of 2: it must not
	// make more Machines.
	time.Sleep(3 * time.Second)
	if got := machinesOf(ctx, t, msName); len(got) != 2 {
		t.Fatalf("worker MachineSet has %d Machines, want one per installed worker", len(got))
	}

	// Day 2: the BMAC writes the host's objects while its agent installs,
	// before the Node exists.
	day2 := installedHost("inst-day2-bmh", agentv1beta1.HostRoleWorker)
	day2.Hostname, day2.Hardware.Hostname = "inst-day2-node", "inst-day2-node"
	liveISO := "live-iso"
	hub := bmov1alpha1.BareMetalHostSpec{BootMACAddress: day2.BootMACAddress, Online: true,
		AutomatedCleaningMode: bmov1alpha1.CleaningModeDisabled,
		BMC:                   bmov1alpha1.BMCDetails{Address: "redfish-virtualmedia+http://127.0.0.1:8000/redfish/v1/Systems/x", CredentialsName: "x-bmc"},
		Image:                 &bmov1alpha1.Image{URL: "http://127.0.0.1:9999/discovery.iso", DiskFormat: &liveISO}}
	if err := m.AddInstalledHost(ctx, assisted.Day2Host{InstalledHost: day2, Machine: "site-inst-day2-bmh", ClusterName: "site", HubSpec: hub}); err != nil {
		t.Fatal(err)
	}
	pending := &machinev1beta1.Machine{}
	pollFor(ctx, t, time.Minute, "the day-2 Machine Provisioned while its Node does not exist", func() bool {
		err := suite.client.Get(ctx, client.ObjectKey{Namespace: workload.MachineAPINamespace, Name: "site-inst-day2-bmh"}, pending)
		return err == nil && pending.Status.Phase != nil && *pending.Status.Phase == machinev1beta1.PhaseProvisioned
	})
	readyNode(ctx, t, day2.Hostname)
	// The Node is found by the host name the hardware details give.
	machine := expectLinked(ctx, t, "site-inst-day2-bmh", "inst-day2-bmh", "inst-day2-node")
	day2Host := &bmov1alpha1.BareMetalHost{}
	if err := suite.client.Get(ctx, client.ObjectKey{Namespace: workload.MachineAPINamespace, Name: "inst-day2-bmh"}, day2Host); err != nil {
		t.Fatal(err)
	}
	if day2Host.Annotations[bmov1alpha1.InspectAnnotationPrefix] != bmov1alpha1.InspectAnnotationValueDisabled {
		t.Errorf("day-2 host annotations %v: want inspection disabled, as the BMAC writes a day-2 spoke host", day2Host.Annotations)
	}
	if len(machine.OwnerReferences) != 0 || machine.Labels[RoleLabel] != "worker" || machine.Labels[TypeLabel] != "worker" ||
		machine.Labels[ClusterLabel] != "site" || machine.Labels[MachineSetLabel] != "" {
		t.Errorf("day-2 Machine owners %v labels %v: want no owner, worker role and type, cluster site, no MachineSet", machine.OwnerReferences, machine.Labels)
	}
	master := &machinev1beta1.Machine{}
	if err := suite.client.Get(ctx, client.ObjectKey{Namespace: workload.MachineAPINamespace, Name: MasterMachineName(infra, 0)}, master); err != nil {
		t.Fatal(err)
	}
	masterSpec, err := providerSpec(master)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"apiVersion": ProviderSpecAPIVersion, "kind": ProviderSpecKind,
		"image": map[string]any{"checksum": masterSpec.Image.Checksum, "url": masterSpec.Image.URL}}
	var got map[string]any
	if err := json.Unmarshal(machine.Spec.ProviderSpec.Value.Raw, &got); err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("day-2 Machine providerSpec %s (%v), want the control-plane image only: %v", machine.Spec.ProviderSpec.Value.Raw, err, want)
	}
	host := &bmov1alpha1.BareMetalHost{}
	if err := suite.client.Get(ctx, client.ObjectKey{Namespace: workload.MachineAPINamespace, Name: "inst-day2-bmh"}, host); err != nil {
		t.Fatal(err)
	}
	if host.Spec.ExternallyProvisioned || host.Spec.BMC != (bmov1alpha1.BMCDetails{}) || host.Spec.Image == nil || host.Spec.Image.URL != hub.Image.URL ||
		!host.Spec.Online || host.Spec.BootMACAddress != hub.BootMACAddress {
		t.Errorf("day-2 host spec %+v: want the hub host's without its BMC", host.Spec)
	}
	if got := machinesOf(ctx, t, msName); len(got) != 2 {
		t.Errorf("worker MachineSet took the day-2 Machine: %d Machines", len(got))
	}
}

func installedHost(name string, role agentv1beta1.HostRole) assisted.InstalledHost {
	return assisted.InstalledHost{BareMetalHost: name, Hostname: name, Role: role, BootMACAddress: "52:54:00:00:10:01",
		Hardware: &bmov1alpha1.HardwareDetails{Hostname: name, CPU: bmov1alpha1.CPU{Arch: "x86_64", Count: 4}, RAMMebibytes: 16384,
			NIC: []bmov1alpha1.NIC{{Name: "eth0", MAC: "52:54:00:00:10:01"}}}}
}

// expectLinked waits for a Machine to be Running on its externally
// provisioned host with nodeRef and providerIDs set, and checks the host
// was left unmanaged and untouched; it returns the Machine.
func expectLinked(ctx context.Context, t *testing.T, machine, host, node string) *machinev1beta1.Machine {
	t.Helper()
	m := &machinev1beta1.Machine{ObjectMeta: metav1.ObjectMeta{Name: machine, Namespace: workload.MachineAPINamespace}}
	h := &bmov1alpha1.BareMetalHost{ObjectMeta: metav1.ObjectMeta{Name: host, Namespace: workload.MachineAPINamespace}}
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: node}}
	// Up to two of the Machine controller's 30s requeues: the host's
	// hardware details (its host name) may come after the first look.
	pollFor(ctx, t, 2*time.Minute, "machine "+machine+" Running, linked to node "+node, func() bool {
		if suite.client.Get(ctx, client.ObjectKeyFromObject(m), m) != nil || suite.client.Get(ctx, client.ObjectKeyFromObject(h), h) != nil ||
			suite.client.Get(ctx, client.ObjectKeyFromObject(n), n) != nil {
			return false
		}
		id := ProviderID(h)
		return m.Status.Phase != nil && *m.Status.Phase == machinev1beta1.PhaseRunning && m.Status.NodeRef != nil && m.Status.NodeRef.Name == node &&
			m.Spec.ProviderID != nil && *m.Spec.ProviderID == id && n.Spec.ProviderID == id &&
			h.Status.Provisioning.State == bmov1alpha1.StateUnmanaged && h.Status.HardwareDetails != nil
	})
	ref := h.Spec.ConsumerRef
	switch {
	case ref == nil || ref.Kind != "Machine" || ref.APIVersion != "machine.openshift.io/v1beta1" || ref.Name != machine:
		t.Errorf("host %s consumerRef %+v, want Machine %s", host, ref, machine)
	case m.Annotations[HostAnnotation] != workload.MachineAPINamespace+"/"+host:
		t.Errorf("machine %s annotation %q", machine, m.Annotations[HostAnnotation])
	case n.Annotations["machine.openshift.io/machine"] != workload.MachineAPINamespace+"/"+machine:
		t.Errorf("node %s annotations %v: nodelink did not link it to %s", node, n.Annotations, machine)
	}
	return m
}

// expectInstallerHost: a host the installer wrote is externally
// provisioned, online, without BMC or image.
func expectInstallerHost(ctx context.Context, t *testing.T, name string) {
	t.Helper()
	h := &bmov1alpha1.BareMetalHost{}
	if err := suite.client.Get(ctx, client.ObjectKey{Namespace: workload.MachineAPINamespace, Name: name}, h); err != nil {
		t.Fatal(err)
	}
	if !h.Spec.ExternallyProvisioned || !h.Spec.Online || h.Spec.BMC != (bmov1alpha1.BMCDetails{}) || h.Spec.Image != nil {
		t.Errorf("host %s spec %+v: want externally provisioned, online, no BMC, no image", name, h.Spec)
	}
	if h.Annotations[bmov1alpha1.StatusAnnotation] != "" || h.Annotations[bmov1alpha1.InspectAnnotationPrefix] != "" ||
		!h.Status.PoweredOn || h.Status.HardwareDetails == nil {
		t.Errorf("host %s annotations %v, powered on %v, hardware %v: want the status restored from assisted-service's status annotation "+
			"(powered on, its hardware), the annotation gone and no inspect annotation", name, h.Annotations, h.Status.PoweredOn, h.Status.HardwareDetails)
	}
}

func machinesOf(ctx context.Context, t *testing.T, ms string) []machinev1beta1.Machine {
	t.Helper()
	list := &machinev1beta1.MachineList{}
	if err := suite.client.List(ctx, list, client.InNamespace(workload.MachineAPINamespace), client.MatchingLabels{MachineSetLabel: ms}); err != nil {
		t.Fatal(err)
	}
	return list.Items
}

// startMachineAPI runs the whole machine API on the suite's cluster with
// installed hosts, and at the end stops it and removes what it and the
// test wrote.
func startMachineAPI(t *testing.T, installed []assisted.InstalledHost) *MachineAPI {
	t.Helper()
	image := filepath.Join(t.TempDir(), "node.iso")
	if err := os.WriteFile(image, []byte("node image"), 0o600); err != nil {
		t.Fatal(err)
	}
	m, err := Start(context.Background(), Options{
		RESTConfig: suite.cluster.RESTConfig(), NodeImage: image, InfrastructureName: suite.cluster.InfrastructureName(),
		Installed: installed, Retry: time.Second, Logger: logr.Discard(),
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := m.Stop(); err != nil {
			t.Error(err)
		}
		removeAll(t)
	})
	return m
}

// removeAll deletes the machine API objects of the namespace once no
// controller is left to release their finalizers.
func removeAll(t *testing.T) {
	ctx := context.Background()
	ns := client.InNamespace(workload.MachineAPINamespace)
	_ = suite.client.DeleteAllOf(ctx, &machinev1beta1.MachineSet{}, ns)
	var objs []client.Object
	machines := &machinev1beta1.MachineList{}
	hosts := &bmov1alpha1.BareMetalHostList{}
	if err := suite.client.List(ctx, machines, ns); err != nil {
		t.Error(err)
	}
	if err := suite.client.List(ctx, hosts, ns); err != nil {
		t.Error(err)
	}
	for i := range machines.Items {
		objs = append(objs, &machines.Items[i])
	}
	for i := range hosts.Items {
		objs = append(objs, &hosts.Items[i])
	}
	for _, o := range objs {
		o.SetFinalizers(nil)
		_ = suite.client.Update(ctx, o)
		_ = suite.client.Delete(ctx, o)
	}
}

// readyNode registers a Node that reports Ready, and keeps reporting
// (the cluster's node lifecycle controller marks a silent Node unknown)
// until the test ends.
func readyNode(ctx context.Context, t *testing.T, name string) {
	t.Helper()
	newNode(t, name, nil)
	beat := func(ctx context.Context) error {
		return retry.RetryOnConflict(retry.DefaultRetry, func() error { return heartbeat(ctx, name) })
	}
	if err := beat(ctx); err != nil {
		t.Fatal(err)
	}
	bctx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = wait.PollUntilContextCancel(bctx, 5*time.Second, false, func(ctx context.Context) (bool, error) {
			_ = beat(ctx)
			return false, nil
		})
	}()
	t.Cleanup(func() { stop(); <-done })
}

// heartbeat reports the Node Ready now, as its kubelet would.
func heartbeat(ctx context.Context, name string) error {
	n := &corev1.Node{}
	if err := suite.client.Get(ctx, client.ObjectKey{Name: name}, n); err != nil {
		return err
	}
	now := metav1.Now()
	ready := corev1.NodeCondition{Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "KubeletReady", LastHeartbeatTime: now, LastTransitionTime: now}
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady && c.Status == corev1.ConditionTrue {
			ready.LastTransitionTime = c.LastTransitionTime
		}
	}
	n.Status.Conditions = []corev1.NodeCondition{ready}
	return suite.client.Status().Update(ctx, n)
}

func pollFor(ctx context.Context, t *testing.T, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	err := wait.PollUntilContextTimeout(ctx, 500*time.Millisecond, timeout, true, func(context.Context) (bool, error) { return cond(), nil })
	if err != nil {
		t.Fatalf("timed out waiting: %s", what)
	}
}
