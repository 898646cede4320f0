package conformance

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
)

// InfrastructureContracts are the contracts an infrastructure provider may
// declare, newest first: Cluster API v1.13 still reads providers at
// v1beta1 (status.ready), as HyperShift's agent provider is.
var InfrastructureContracts = []string{"v1beta2", "v1beta1"}

// providerLabel is the label clusterctl tells a provider's objects by.
const providerLabel = "cluster.x-k8s.io/provider"

// CheckInfrastructureCRD checks an infrastructure kind's CRD as CheckCRD
// does, against the contract its labels declare, and returns that contract.
func CheckInfrastructureCRD(ctx context.Context, c client.Reader, gvk schema.GroupVersionKind) (*apiextensionsv1.CustomResourceDefinition, string, error) {
	return checkCRD(ctx, c, gvk, true, InfrastructureContracts)
}

// CheckInfrastructureTemplateCRD checks an infrastructure template kind's
// CRD (spec.template.spec) and returns the contract it declares.
func CheckInfrastructureTemplateCRD(ctx context.Context, c client.Reader, gvk schema.GroupVersionKind) (string, error) {
	return checkTemplateCRD(ctx, c, gvk, InfrastructureContracts)
}

// Provisioned reads the contract's provisioned flag: status.ready at
// v1beta1, status.initialization.provisioned at v1beta2.
func Provisioned(u *unstructured.Unstructured, contract string) bool {
	v, _, _ := unstructured.NestedBool(u.Object, provisionedField(contract)...)
	return v
}

func provisionedField(contract string) []string {
	if contract == "v1beta1" {
		return []string{"status", "ready"}
	}
	return []string{"status", "initialization", "provisioned"}
}

// CheckNotProvisioned checks an infrastructure object made no progress it
// may not make yet (paused, or a machine without its owner Machine):
// neither provisioned nor, for a machine, given a provider ID.
func CheckNotProvisioned(u *unstructured.Unstructured, contract, why string) error {
	if Provisioned(u, contract) {
		return violationOf(contract, describe(u), "."+strings.Join(provisionedField(contract), ".")+" stays false "+why, "it is true")
	}
	if id, _, _ := unstructured.NestedString(u.Object, "spec", "providerID"); id != "" {
		return violationOf(contract, describe(u), "spec.providerID stays unset "+why, fmt.Sprintf("it is %q", id))
	}
	return nil
}

// CheckMachineProvisioned checks a provisioned infrastructure machine: its
// provider ID, and its addresses, each of a Cluster API address type and
// not empty. It returns an error saying so while not yet provisioned.
func CheckMachineProvisioned(u *unstructured.Unstructured, contract string) error {
	if !Provisioned(u, contract) {
		return fmt.Errorf("%s: not provisioned yet (.%s)", describe(u), strings.Join(provisionedField(contract), "."))
	}
	var errs []error
	if id, _, _ := unstructured.NestedString(u.Object, "spec", "providerID"); id == "" {
		errs = append(errs, violationOf(contract, describe(u), "spec.providerID is set once the machine is provisioned", "it is empty"))
	}
	addresses, _, err := unstructured.NestedSlice(u.Object, "status", "addresses")
	if err != nil {
		errs = append(errs, violationOf(contract, describe(u), "status.addresses is a list of MachineAddresses", err.Error()))
	}
	for i, a := range addresses {
		m, _ := a.(map[string]any)
		typ, _ := m["type"].(string)
		address, _ := m["address"].(string)
		if !addressTypes[clusterv1.MachineAddressType(typ)] || address == "" {
			errs = append(errs, violationOf(contract, describe(u), "each of status.addresses has a type Cluster API knows (Hostname, ExternalIP, InternalIP, ExternalDNS, InternalDNS) and an address",
				fmt.Sprintf("address %d is type %q, address %q", i, typ, address)))
		}
	}
	return errors.Join(errs...)
}

var addressTypes = map[clusterv1.MachineAddressType]bool{
	clusterv1.MachineHostName: true, clusterv1.MachineExternalIP: true, clusterv1.MachineInternalIP: true,
	clusterv1.MachineExternalDNS: true, clusterv1.MachineInternalDNS: true,
}

// CheckClusterProvisioned checks a provisioned infrastructure cluster has
// the control plane endpoint Cluster API copies to the Cluster. It returns
// an error saying so while not yet provisioned.
func CheckClusterProvisioned(u *unstructured.Unstructured, contract string) error {
	if !Provisioned(u, contract) {
		return fmt.Errorf("%s: not provisioned yet (.%s)", describe(u), strings.Join(provisionedField(contract), "."))
	}
	host, _, _ := unstructured.NestedString(u.Object, "spec", "controlPlaneEndpoint", "host")
	port, _, _ := unstructured.NestedInt64(u.Object, "spec", "controlPlaneEndpoint", "port")
	if host == "" || port <= 0 || port > 65535 {
		return violationOf(contract, describe(u), "spec.controlPlaneEndpoint has a host and a port (1-65535) once the cluster is provisioned", fmt.Sprintf("host %q, port %d", host, port))
	}
	return nil
}

// CheckComponents checks a provider's clusterctl manifests: every object
// of components.yaml carries cluster.x-k8s.io/provider=provider, and every
// CRD the contract label of the newest release series of metadata.yaml,
// which it returns.
func CheckComponents(components, metadata []byte, provider string) (string, error) {
	contract, err := newestContract(metadata)
	if err != nil {
		return "", err
	}
	var errs []error
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(components), 4096)
	for {
		u := &unstructured.Unstructured{}
		if err := dec.Decode(&u.Object); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			return "", fmt.Errorf("decode components.yaml: %w", err)
		}
		if len(u.Object) == 0 {
			continue
		}
		where := "components.yaml " + u.GetKind() + " " + u.GetName()
		if got := u.GetLabels()[providerLabel]; got != provider {
			errs = append(errs, violationOf(contract, where, "every object is labelled "+providerLabel+"="+provider, fmt.Sprintf("the label is %q", got)))
		}
		if u.GetKind() == "CustomResourceDefinition" && u.GetLabels()[contractLabelOf(contract)] == "" {
			errs = append(errs, violationOf(contract, where, "CRDs carry the label "+contractLabelOf(contract)+" of the contract metadata.yaml names", fmt.Sprintf("labels are %v", u.GetLabels())))
		}
	}
	return contract, errors.Join(errs...)
}

// newestContract is the contract of metadata.yaml's newest release series.
func newestContract(metadata []byte) (string, error) {
	var meta struct {
		ReleaseSeries []struct {
			Major, Minor int32
			Contract     string
		} `json:"releaseSeries"`
	}
	if err := yaml.Unmarshal(metadata, &meta); err != nil {
		return "", fmt.Errorf("decode metadata.yaml: %w", err)
	}
	contract, major, minor := "", int32(-1), int32(-1)
	for _, s := range meta.ReleaseSeries {
		if s.Major > major || (s.Major == major && s.Minor > minor) {
			contract, major, minor = s.Contract, s.Major, s.Minor
		}
	}
	if contract == "" {
		return "", errors.New("metadata.yaml: no release series names a contract")
	}
	return contract, nil
}
