package v1beta1

import (
	"bytes"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"
)

// NetConfig is an nmstate network state document, kept verbatim rather than
// modelled as Go structs so it never falls behind the nmstate schema. In
// JSON it is the document itself (an object); in Go, Raw holds it as YAML,
// the form nmstatectl takes.
//
// +kubebuilder:validation:Type=object
type NetConfig struct {
	// Raw is the nmstate document as YAML; empty when unset.
	Raw []byte `json:"-"`
}

// MarshalJSON writes the document as JSON (null when empty).
func (c NetConfig) MarshalJSON() ([]byte, error) {
	if len(bytes.TrimSpace(c.Raw)) == 0 {
		return []byte("null"), nil
	}
	return yaml.YAMLToJSON(c.Raw)
}

// UnmarshalJSON keeps the document as YAML in Raw.
func (c *NetConfig) UnmarshalJSON(data []byte) error {
	if string(bytes.TrimSpace(data)) == "null" {
		c.Raw = nil
		return nil
	}
	out, err := yaml.JSONToYAML(data)
	if err != nil {
		return err
	}
	c.Raw = out
	return nil
}

// String returns the document as YAML.
func (c NetConfig) String() string { return string(c.Raw) }

// Interface ties an interface name used in the nmstate document to the MAC
// address of the real NIC, which also identifies the host.
type Interface struct {
	// Name of the interface as written in the nmstate document.
	Name string `json:"name"`
	// MacAddress of the NIC on the host.
	// +kubebuilder:validation:Pattern=`^([0-9A-Fa-f]{2}[:]){5}([0-9A-Fa-f]{2})$`
	MacAddress string `json:"macAddress"`
}

// NMStateConfigSpec is the static network configuration of one host.
type NMStateConfigSpec struct {
	// Config is the nmstate document.
	// +kubebuilder:pruning:PreserveUnknownFields
	// +optional
	Config NetConfig `json:"config,omitempty"`
	// Interfaces map the names in Config to MAC addresses; at least one is
	// needed to match the host.
	// +kubebuilder:validation:MinItems=1
	// +optional
	Interfaces []Interface `json:"interfaces,omitempty"`
}

// NMStateConfig carries the static network configuration of one host; an
// InfraEnv selects NMStateConfigs by label and embeds them in its discovery
// image.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:path=nmstateconfigs,scope=Namespaced
type NMStateConfig struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec NMStateConfigSpec `json:"spec,omitempty"`
}

// NMStateConfigList is a list of NMStateConfigs.
//
// +kubebuilder:object:root=true
type NMStateConfigList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []NMStateConfig `json:"items"`
}

func init() {
	SchemeBuilder.Register(&NMStateConfig{}, &NMStateConfigList{})
}
