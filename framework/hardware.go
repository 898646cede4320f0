package framework

import (
	"strings"

	bmov1alpha1 "github.com/metal3-io/baremetal-operator/apis/metal3.io/v1alpha1"

	agentv1beta1 "github.com/paritylab/paritylab/providers/thirdparty/agentinstall/v1beta1"
	"github.com/paritylab/paritylab/results"
)

const gib = 1 << 30

// HardwareOfHost is what a BareMetalHost's inspection (or the hardware
// details annotation it was given) reports; nil when it reports nothing.
func HardwareOfHost(h *bmov1alpha1.BareMetalHost) *results.Hardware {
	hw := h.Status.HardwareDetails
	if hw == nil {
		return nil
	}
	out := &results.Hardware{Arch: hw.CPU.Arch, CPUs: hw.CPU.Count, MemoryMiB: hw.RAMMebibytes}
	for _, d := range hw.Storage {
		out.Disks = append(out.Disks, results.Disk{Name: d.Name, SizeGiB: roundGiB(int64(d.SizeBytes))})
	}
	for _, n := range hw.NIC {
		out.NICs = append(out.NICs, results.NIC{Name: n.Name, MAC: strings.ToLower(n.MAC)})
	}
	return out
}

// HardwareOfAgent is what an Agent's discovery inventory reports; nil
// when it has none yet.
func HardwareOfAgent(a *agentv1beta1.Agent) *results.Hardware {
	inv := a.Status.Inventory
	if inv.CPU.Count == 0 && inv.Memory.PhysicalBytes == 0 {
		return nil
	}
	out := &results.Hardware{Arch: inv.CPU.Architecture, CPUs: int(inv.CPU.Count), MemoryMiB: int(inv.Memory.PhysicalBytes >> 20)}
	for _, d := range inv.Disks {
		// An optical drive's size is the medium in it, not a disk of
		// the host; inspection through the BMC does not list it either.
		if d.DriveType != "ODD" {
			out.Disks = append(out.Disks, results.Disk{Name: d.Name, SizeGiB: roundGiB(d.SizeBytes)})
		}
	}
	for _, n := range inv.Interfaces {
		out.NICs = append(out.NICs, results.NIC{Name: n.Name, MAC: strings.ToLower(n.MacAddress)})
	}
	return out
}

// AgentWithMAC returns the agent whose inventory has an interface with
// the MAC address, or nil.
func AgentWithMAC(agents []agentv1beta1.Agent, mac string) *agentv1beta1.Agent {
	mac = strings.ToLower(mac)
	for i := range agents {
		for _, n := range agents[i].Status.Inventory.Interfaces {
			if strings.ToLower(n.MacAddress) == mac && mac != "" {
				return &agents[i]
			}
		}
	}
	return nil
}

// roundGiB rounds a size in bytes to whole GiB, as people state disk
// sizes; BMCs and inventories report a few MiB more or less.
func roundGiB(bytes int64) int {
	return int((bytes + gib/2) / gib)
}
