package mapi

import (
	"context"
	"encoding/json"
	"fmt"

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
// externally provisioned BareMetalHost without BMC access. The bare-metal
// operator, without BMC details, leaves such a host unmanaged and never
// powers or deprovisions it; a Machine that consumes it finds it existing
// and only links it.
type hostObjects struct {
	opts Options
	img  *imageServer
}

// day1 is what the installer writes for the hosts it installed on the
// BareMetal platform: a BareMetalHost per host, and an
// <infra>-master-<i> Machine per control-plane host, which its host
// names as consumer. Worker hosts are left without consumer and no
// worker Machine is written: the worker MachineSet (its replicas count
// the installed workers, see workerMachineSet) creates the worker
// Machines, and assisted-installer's controller links each to a worker
// host (installerController).
func (o hostObjects) day1(hosts []assisted.InstalledHost) (masters []linkedHost, workers []*bmov1alpha1.BareMetalHost) {
	for _, h := range hosts {
		if h.Role != agentv1beta1.HostRoleMaster {
			workers = append(workers, o.host(h, ""))
			continue
		}
		m := o.masterMachine(MasterMachineName(o.opts.InfrastructureName, len(masters)))
		masters = append(masters, linkedHost{host: o.host(h, m.Name), machine: m})
	}
	return masters, workers
}

// linkedHost is a host and the Machine that consumes it.
type linkedHost struct {
	host    *bmov1alpha1.BareMetalHost
	machine *machinev1beta1.Machine
}

// host is an installed host's BareMetalHost as assisted-service writes it
// into the installer's manifests (modifyBMHFile): BMC cleared (the
// cluster cannot reach the hub's BMC Secrets), externally provisioned,
// online, consumed by the named Machine (none when empty), and a status
// for the bare-metal operator to start from, cached in the status
// annotation: the hardware its agent measured, powered on. Nothing
// disables inspection: an externally provisioned host is not inspected.
func (o hostObjects) host(h assisted.InstalledHost, machine string) *bmov1alpha1.BareMetalHost {
	raw, _ := json.Marshal(bmov1alpha1.BareMetalHostStatus{HardwareDetails: h.Hardware, PoweredOn: true}) // plain struct: cannot fail
	annotations := map[string]string{bmov1alpha1.StatusAnnotation: string(raw)}
	bmh := &bmov1alpha1.BareMetalHost{
		ObjectMeta: metav1.ObjectMeta{Name: h.BareMetalHost, Namespace: o.opts.Namespace, Annotations: annotations},
		Spec: bmov1alpha1.BareMetalHostSpec{
			BootMACAddress: h.BootMACAddress, ExternallyProvisioned: true, Online: true,
			AutomatedCleaningMode: bmov1alpha1.CleaningModeDisabled,
		},
	}
	if machine != "" {
		bmh.Spec.ConsumerRef = machineRef(machine, o.opts.Namespace)
	}
	return bmh
}

func machineRef(name, namespace string) *corev1.ObjectReference {
	return &corev1.ObjectReference{Kind: machineKind, APIVersion: machineAPIVersion, Name: name, Namespace: namespace}
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

func (o hostObjects) image() Image {
	return Image{URL: o.img.url(), Checksum: o.img.checksum}
}

func roleLabels(infra, role string) map[string]string {
	return map[string]string{ClusterLabel: infra, RoleLabel: role, TypeLabel: role}
}

// createLinked writes each host and then the Machine it names (hosts
// first: a Machine whose host already points back is one the Machine
// controller finds existing). Existing objects are kept.
func createLinked(ctx context.Context, c client.Client, linked []linkedHost) error {
	for _, l := range linked {
		if err := createOrKeep(ctx, c, l.host); err != nil {
			return err
		}
		m := l.machine
		if m.Annotations == nil {
			m.Annotations = map[string]string{}
		}
		m.Annotations[HostAnnotation] = l.host.Namespace + "/" + l.host.Name
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
