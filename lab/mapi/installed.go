package mapi

import (
	"context"
	"encoding/json"
	"fmt"
	"hash/fnv"

	bmov1alpha1 "github.com/metal3-io/baremetal-operator/apis/metal3.io/v1alpha1"
	machinev1beta1 "github.com/openshift/api/machine/v1beta1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/paritylab/paritylab/lab/assisted"
	agentv1beta1 "github.com/paritylab/paritylab/providers/thirdparty/agentinstall/v1beta1"
)

// MasterUserDataSecret is the user data Secret the installer names in
// control-plane Machines. Nothing reads it: control-plane hosts are
// externally provisioned, so the actuator never provisions them.
const MasterUserDataSecret = "master-user-data-managed"

// MasterMachineName is the installer's name of the i-th control-plane
// Machine.
func MasterMachineName(infra string, i int) string { return fmt.Sprintf("%s-master-%d", infra, i) }

// hostObjects are the machine API objects of hosts installed outside it
// (day 1 by the installer, day 2 by assisted-service): for each host an
// externally provisioned BareMetalHost without BMC access, consumed by
// its Machine, which names it back. The actuator then finds each Machine
// existing and only links it; the bare-metal operator, without BMC
// details, leaves the host unmanaged and never powers or deprovisions it.
type hostObjects struct {
	opts Options
	img  *imageServer
}

// day1 is what the installer leaves for the hosts it installed:
// <infra>-master-<i> Machines, and worker Machines that carry the worker
// MachineSet's template so that its controller adopts them (the
// MachineSet's replicas count them, see workerMachineSet).
func (o hostObjects) day1(hosts []assisted.InstalledHost) (bmhs []*bmov1alpha1.BareMetalHost, machines []*machinev1beta1.Machine) {
	masters := 0
	ms := workerMachineSet(o.opts, o.img, 0)
	for _, h := range hosts {
		var m *machinev1beta1.Machine
		if h.Role == agentv1beta1.HostRoleMaster {
			m = o.masterMachine(MasterMachineName(o.opts.InfrastructureName, masters))
			masters++
		} else {
			m = o.workerMachine(ms, h)
		}
		bmhs = append(bmhs, o.host(h, m.Name))
		machines = append(machines, m)
	}
	return bmhs, machines
}

// host is an installed host's BareMetalHost: BMC cleared (the cluster
// cannot reach the hub's BMC Secrets), inspection disabled, externally
// provisioned, online, consumed by the Machine, with the hardware its
// agent measured for the bare-metal operator to take into its status.
func (o hostObjects) host(h assisted.InstalledHost, machine string) *bmov1alpha1.BareMetalHost {
	annotations := map[string]string{bmov1alpha1.InspectAnnotationPrefix: bmov1alpha1.InspectAnnotationValueDisabled}
	if h.Hardware != nil {
		raw, _ := json.Marshal(h.Hardware) // plain struct: cannot fail
		annotations[bmov1alpha1.HardwareDetailsAnnotation] = string(raw)
	}
	return &bmov1alpha1.BareMetalHost{
		ObjectMeta: metav1.ObjectMeta{Name: h.BareMetalHost, Namespace: o.opts.Namespace, Annotations: annotations},
		Spec: bmov1alpha1.BareMetalHostSpec{
			BootMACAddress: h.BootMACAddress, ExternallyProvisioned: true, Online: true,
			AutomatedCleaningMode: bmov1alpha1.CleaningModeDisabled,
			ConsumerRef:           &corev1.ObjectReference{Kind: machineKind, APIVersion: machineAPIVersion, Name: machine, Namespace: o.opts.Namespace},
		},
	}
}

// masterMachine is an installer control-plane Machine.
func (o hostObjects) masterMachine(name string) *machinev1beta1.Machine {
	ps, _ := RawProviderSpec(BareMetalMachineProviderSpec{ // plain structs: cannot fail
		Image:    o.image(),
		UserData: &corev1.SecretReference{Name: MasterUserDataSecret},
	})
	return &machinev1beta1.Machine{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: o.opts.Namespace, Labels: roleLabels(o.opts.InfrastructureName, "master")},
		Spec:       machinev1beta1.MachineSpec{ProviderSpec: *ps},
	}
}

// workerMachine is a worker Machine as the worker MachineSet would have
// made it, named after its host so that writing it again names it alike.
func (o hostObjects) workerMachine(ms *machinev1beta1.MachineSet, h assisted.InstalledHost) *machinev1beta1.Machine {
	t := ms.Spec.Template
	return &machinev1beta1.Machine{
		ObjectMeta: metav1.ObjectMeta{Name: ms.Name + "-" + nameSuffix(h.BareMetalHost), Namespace: o.opts.Namespace, Labels: t.Labels},
		Spec:       *t.Spec.DeepCopy(),
	}
}

// day2Machine is the Machine assisted-service's BMAC creates for a host
// added to the cluster: no owner, worker role labels, the worker
// providerSpec (never used to provision).
func (o hostObjects) day2Machine(name string) *machinev1beta1.Machine {
	ms := workerMachineSet(o.opts, o.img, 0)
	return &machinev1beta1.Machine{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: o.opts.Namespace, Labels: roleLabels(o.opts.InfrastructureName, "worker")},
		Spec:       machinev1beta1.MachineSpec{ProviderSpec: ms.Spec.Template.Spec.ProviderSpec},
	}
}

func (o hostObjects) image() Image {
	return Image{URL: o.img.url(), Checksum: o.img.checksum, ChecksumType: "sha256", DiskFormat: "raw"}
}

func roleLabels(infra, role string) map[string]string {
	return map[string]string{ClusterLabel: infra, RoleLabel: role, TypeLabel: role}
}

// nameSuffix is five characters of the alphabet generated Kubernetes
// names use, derived from s.
func nameSuffix(s string) string {
	const alphabet = "bcdfghjklmnpqrstvwxz2456789"
	h := fnv.New64a()
	_, _ = h.Write([]byte(s))
	n := h.Sum64()
	out := make([]byte, 5)
	for i := range out {
		out[i] = alphabet[n%uint64(len(alphabet))]
		n /= uint64(len(alphabet))
	}
	return string(out)
}

// createLinked writes each host and then its Machine (hosts first: a Machine
// whose host already points back is one the Machine controller finds
// existing). Existing objects are kept.
func createLinked(ctx context.Context, c client.Client, bmhs []*bmov1alpha1.BareMetalHost, machines []*machinev1beta1.Machine) error {
	for i := range bmhs {
		if err := createOrKeep(ctx, c, bmhs[i]); err != nil {
			return err
		}
		m := machines[i]
		if m.Annotations == nil {
			m.Annotations = map[string]string{}
		}
		m.Annotations[HostAnnotation] = bmhs[i].Namespace + "/" + bmhs[i].Name
		if err := createOrKeep(ctx, c, m); err != nil {
			return err
		}
	}
	return nil
}

func createOrKeep(ctx context.Context, c client.Client, obj client.Object) error {
	if err := c.Create(ctx, obj); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("create %T %s: %w", obj, obj.GetName(), err)
	}
	return nil
}

// countWorkers is how many of the hosts are workers.
func countWorkers(hosts []assisted.InstalledHost) int32 {
	n := int32(0)
	for _, h := range hosts {
		if h.Role != agentv1beta1.HostRoleMaster {
			n++
		}
	}
	return n
}

// AddInstalledHost records a host added to the running cluster (a ZTP
// day-2 worker): its BareMetalHost and the Machine of the given name.
func (m *MachineAPI) AddInstalledHost(ctx context.Context, machine string, h assisted.InstalledHost) error {
	o := hostObjects{opts: m.opts, img: m.images}
	return createLinked(ctx, m.client, []*bmov1alpha1.BareMetalHost{o.host(h, machine)}, []*machinev1beta1.Machine{o.day2Machine(machine)})
}
