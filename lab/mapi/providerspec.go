package mapi

import (
	"encoding/json"
	"errors"
	"fmt"

	machinev1beta1 "github.com/openshift/api/machine/v1beta1"
	maomachine "github.com/openshift/machine-api-operator/pkg/controller/machine"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// ProviderSpec API version and kind of the upstream bare-metal actuator.
const (
	ProviderSpecAPIVersion = "baremetal.cluster.k8s.io/v1alpha1"
	ProviderSpecKind       = "BareMetalMachineProviderSpec"
)

// BareMetalMachineProviderSpec is the providerSpec of a bare-metal
// Machine, with the upstream actuator's JSON field names.
type BareMetalMachineProviderSpec struct {
	metav1.TypeMeta `json:",inline"`
	// Image is the disk image the host is provisioned with.
	Image Image `json:"image"`
	// UserData names the Secret (key userData) the host boots with.
	UserData *corev1.SecretReference `json:"userData,omitempty"`
	// HostSelector restricts the hosts a Machine may take.
	HostSelector HostSelector `json:"hostSelector,omitempty"`
}

// Image is a disk image and its checksum (a value or the URL of one):
// all the upstream providerSpec gives, so the host's image names no
// checksum type or disk format and the deploy ramdisk tells both from
// the checksum's length and the image's content.
type Image struct {
	URL      string `json:"url"`
	Checksum string `json:"checksum"`
}

// HostSelector selects BareMetalHosts by labels.
type HostSelector struct {
	MatchLabels      map[string]string         `json:"matchLabels,omitempty"`
	MatchExpressions []HostSelectorRequirement `json:"matchExpressions,omitempty"`
}

// HostSelectorRequirement is one label expression: operator is a
// selection.Operator (in, notin, =, ==, !=, exists, !, gt, lt).
type HostSelectorRequirement struct {
	Key      string   `json:"key"`
	Operator string   `json:"operator"`
	Values   []string `json:"values"`
}

// providerSpec decodes a Machine's providerSpec; a missing or malformed
// one is an invalid configuration, which the Machine controller turns
// into a Failed Machine.
func providerSpec(m *machinev1beta1.Machine) (*BareMetalMachineProviderSpec, error) {
	ps := m.Spec.ProviderSpec.Value
	if ps == nil || len(ps.Raw) == 0 {
		return nil, maomachine.InvalidMachineConfiguration("machine %s has no providerSpec", m.Name)
	}
	spec := &BareMetalMachineProviderSpec{}
	if err := json.Unmarshal(ps.Raw, spec); err != nil {
		return nil, maomachine.InvalidMachineConfiguration("machine %s: decode providerSpec: %v", m.Name, err)
	}
	if err := spec.validate(); err != nil {
		return nil, maomachine.InvalidMachineConfiguration("machine %s: %v", m.Name, err)
	}
	return spec, nil
}

func (s *BareMetalMachineProviderSpec) validate() error {
	var errs []error
	if s.Image.URL == "" {
		errs = append(errs, errors.New("providerSpec.image.url is required"))
	}
	if s.Image.Checksum == "" {
		errs = append(errs, errors.New("providerSpec.image.checksum is required"))
	}
	if s.UserData != nil && s.UserData.Name == "" {
		errs = append(errs, errors.New("providerSpec.userData.name is required"))
	}
	return errors.Join(errs...)
}

// RawProviderSpec encodes a providerSpec for a Machine or MachineSet.
func RawProviderSpec(spec BareMetalMachineProviderSpec) (*machinev1beta1.ProviderSpec, error) {
	spec.APIVersion, spec.Kind = ProviderSpecAPIVersion, ProviderSpecKind
	raw, err := json.Marshal(spec)
	if err != nil {
		return nil, fmt.Errorf("encode providerSpec: %w", err)
	}
	return &machinev1beta1.ProviderSpec{Value: &runtime.RawExtension{Raw: raw}}, nil
}
