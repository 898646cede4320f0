package mapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	bmov1alpha1 "github.com/metal3-io/baremetal-operator/apis/metal3.io/v1alpha1"
	machinev1beta1 "github.com/openshift/api/machine/v1beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/paritylab/paritylab/lab/assisted"
)

// AddInstalledHost writes what assisted-service's BMAC writes into a
// cluster for a host added to it on day 2, as soon as the host's agent
// is installing: a BareMetalHost of the hub host's name and a Machine
// that consumes it. Existing objects are kept.
func (m *MachineAPI) AddInstalledHost(ctx context.Context, h assisted.Day2Host) error {
	image, err := masterImage(ctx, m.client, m.opts.Namespace)
	if err != nil {
		return fmt.Errorf("day-2 host %s: %w", h.BareMetalHost, err)
	}
	return createLinked(ctx, m.client, []linkedHost{{host: day2Host(h, m.opts.Namespace), machine: day2Machine(h, m.opts.Namespace, image)}})
}

// day2Host is the hub host's spec without its BMC (the cluster cannot
// reach the hub's BMC Secrets; without BMC details the bare-metal
// operator leaves the host unmanaged), consumed by the host's Machine,
// with inspection disabled and the hardware the agent measured.
func day2Host(h assisted.Day2Host, namespace string) *bmov1alpha1.BareMetalHost {
	annotations := map[string]string{bmov1alpha1.InspectAnnotationPrefix: bmov1alpha1.InspectAnnotationValueDisabled}
	if h.Hardware != nil {
		raw, _ := json.Marshal(h.Hardware) // plain struct: cannot fail
		annotations[bmov1alpha1.HardwareDetailsAnnotation] = string(raw)
	}
	spec := *h.HubSpec.DeepCopy()
	spec.BMC = bmov1alpha1.BMCDetails{}
	spec.ConsumerRef = machineRef(h.Machine, namespace)
	return &bmov1alpha1.BareMetalHost{
		ObjectMeta: metav1.ObjectMeta{Name: h.BareMetalHost, Namespace: namespace, Annotations: annotations},
		Spec:       spec,
	}
}

// day2Machine has no owner, the ClusterDeployment's name as its cluster
// label, the agent's role as role and type, and a providerSpec of only
// the control-plane Machines' image: it is never used to provision.
func day2Machine(h assisted.Day2Host, namespace string, image Image) *machinev1beta1.Machine {
	// Only these fields: the BMAC writes the providerSpec from a
	// template of them.
	type imageRef struct {
		Checksum string `json:"checksum"`
		URL      string `json:"url"`
	}
	raw, _ := json.Marshal(struct { // plain structs: cannot fail
		APIVersion string   `json:"apiVersion"`
		Kind       string   `json:"kind"`
		Image      imageRef `json:"image"`
	}{ProviderSpecAPIVersion, ProviderSpecKind, imageRef{Checksum: image.Checksum, URL: image.URL}})
	role := string(h.Role)
	return &machinev1beta1.Machine{
		ObjectMeta: metav1.ObjectMeta{Name: h.Machine, Namespace: namespace,
			Labels: map[string]string{ClusterLabel: h.ClusterName, RoleLabel: role, TypeLabel: role}},
		Spec: machinev1beta1.MachineSpec{ProviderSpec: machinev1beta1.ProviderSpec{Value: &runtime.RawExtension{Raw: raw}}},
	}
}

// masterImage is the image of the first Machine typed master, where the
// BMAC takes a day-2 Machine's; a cluster without one gets no day-2
// Machine.
func masterImage(ctx context.Context, c client.Client, namespace string) (Image, error) {
	list := &machinev1beta1.MachineList{}
	if err := c.List(ctx, list, client.InNamespace(namespace), client.MatchingLabels{TypeLabel: "master"}); err != nil {
		return Image{}, fmt.Errorf("list control-plane Machines: %w", err)
	}
	if len(list.Items) == 0 {
		return Image{}, errors.New("no Machine typed master to take the image from")
	}
	raw := list.Items[0].Spec.ProviderSpec.Value
	if raw == nil {
		return Image{}, fmt.Errorf("Machine %s has no providerSpec", list.Items[0].Name)
	}
	spec := &BareMetalMachineProviderSpec{}
	if err := json.Unmarshal(raw.Raw, spec); err != nil {
		return Image{}, fmt.Errorf("decode providerSpec of Machine %s: %w", list.Items[0].Name, err)
	}
	return spec.Image, nil
}
