package lab

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/paritylab/paritylab/lab/binaries"
	"github.com/paritylab/paritylab/lab/capm3"
	"github.com/paritylab/paritylab/lab/crds"
	"github.com/paritylab/paritylab/lab/mapi"
	"github.com/paritylab/paritylab/providers/capoa"
)

// ComponentRecord says which implementation, at which version, runs one
// part of the lab, as the lab recorded it when it started the part.
// Observations tag what a flow went through with these (their backends),
// so a report says what really ran instead of what was meant to.
type ComponentRecord struct {
	// Name is the part, e.g. hub, capi-core, infra, machine-api.
	Name string `json:"name"`
	// Implementation names the code, e.g. sigs.k8s.io/cluster-api, or a
	// package of this repository for the lab's own stand-ins.
	Implementation string `json:"implementation"`
	// Version is the module version that ran (from the binary's build
	// information); empty for this repository's own code, whose commit the
	// run's environment records.
	Version string `json:"version,omitempty"`
}

// String renders the record for a report: implementation and version.
func (c ComponentRecord) String() string {
	if c.Version == "" {
		return c.Implementation
	}
	return c.Implementation + " " + c.Version
}

const componentsFile = "components.json"

// Components this repository implements itself: the lab's stand-ins for
// upstream controllers that are not available as modules, and our
// providers.
const (
	ownBMO       = "paritylab lab/metal3 (bare-metal operator stand-in)"
	ownAssisted  = "paritylab lab/assisted (assisted-service stand-in)"
	ownProviders = "paritylab providers"
	ownBMC       = "paritylab lab/redfish (Redfish emulator, libvirt backend)"
)

// hubComponentRecords are the parts a local hub runs, as hubComponents
// starts them, and the machine API every workload cluster gets; hub is
// the running hub's backend (hub.Hub.Backend), machineController the
// upstream machine controller binary the machine APIs run, if any.
func hubComponentRecords(hub, machineController string) []ComponentRecord {
	return []ComponentRecord{
		{Name: "hub", Implementation: hub + " (kube-apiserver, kube-controller-manager " + binaries.KubernetesVersion + ", etcd " + binaries.EtcdVersion + ")"},
		{Name: "capi-core", Implementation: "sigs.k8s.io/cluster-api", Version: moduleVersion("sigs.k8s.io/cluster-api")},
		{Name: "infra", Implementation: capm3.ComponentName, Version: binaries.CAPM3Version},
		{Name: "bootstrap", Implementation: providerRecord("OpenshiftAssistedConfig", capoa.Bootstrap)},
		{Name: "control-plane", Implementation: providerRecord("OpenshiftAssistedControlPlane", capoa.ControlPlane)},
		{Name: "bmo", Implementation: ownBMO},
		{Name: "assisted", Implementation: ownAssisted},
		{Name: "machine-api", Implementation: "github.com/openshift/machine-api-operator", Version: moduleVersion("github.com/openshift/machine-api-operator")},
		machineControllerRecord(machineController),
		{Name: "bmc", Implementation: ownBMC},
	}
}

// hostedClusterRecords name what a lab with hosted clusters runs besides:
// the HyperShift operator stand-in and, per hosted cluster, our agent
// infrastructure provider.
func hostedClusterRecords() []ComponentRecord {
	return []ComponentRecord{
		{Name: "hypershift", Implementation: "paritylab lab/hypershift (HyperShift operator stand-in: HostedCluster, NodePool, ignition server, machine approver)"},
		{Name: "infra-agent", Implementation: ownProviders + " (AgentCluster, AgentMachine: providers/agent)"},
	}
}

// providerRecord names one of our providers by its kind and the
// behaviours where it departs from CAPOA's (providers/capoa), so that a
// report reader knows which CAPI-flow lines CAPOA would not have written.
func providerRecord(kind string, p capoa.Provider) string {
	ids := capoa.IDs(p)
	if len(ids) == 0 {
		return ownProviders + " (" + kind + ")"
	}
	return ownProviders + " (" + kind + "; departs from CAPOA: " + strings.Join(ids, ", ") + ")"
}

// machineControllerRecord names the machine controller of the machine
// APIs: the upstream binary, as its build information says, or our port.
func machineControllerRecord(binary string) ComponentRecord {
	if binary == "" {
		return ComponentRecord{Name: "mapi-actuator", Implementation: mapi.InProcessMachineController}
	}
	impl, version := mapi.MachineControllerBuild(binary)
	return ComponentRecord{Name: "mapi-actuator", Implementation: impl + " (binary " + binary + ")", Version: version}
}

// moduleVersion is the version of a module linked into this binary, or
// "unknown: <why>".
func moduleVersion(path string) string {
	v, err := crds.ModuleVersion(path)
	if err != nil {
		return "unknown: " + err.Error()
	}
	return v
}

// writeComponents records what the lab runs in its state directory.
func writeComponents(stateDir string, records []ComponentRecord) error {
	sort.Slice(records, func(i, j int) bool { return records[i].Name < records[j].Name })
	raw, err := json.MarshalIndent(records, "", "  ")
	if err != nil {
		return fmt.Errorf("encode lab components: %w", err)
	}
	if err := os.WriteFile(filepath.Join(stateDir, componentsFile), raw, 0o600); err != nil {
		return fmt.Errorf("write lab components: %w", err)
	}
	return nil
}

// ReadComponents returns what a lab recorded it runs.
func ReadComponents(stateDir string) ([]ComponentRecord, error) {
	raw, err := os.ReadFile(filepath.Join(stateDir, componentsFile))
	if err != nil {
		return nil, fmt.Errorf("read lab components: %w", err)
	}
	var out []ComponentRecord
	if err := json.Unmarshal(raw, &out); err != nil {
		return nil, fmt.Errorf("decode lab components %s: %w", filepath.Join(stateDir, componentsFile), err)
	}
	return out, nil
}
