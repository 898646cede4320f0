package assisted

import (
	"context"
	"fmt"

	bmov1alpha1 "github.com/metal3-io/baremetal-operator/apis/metal3.io/v1alpha1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	agentv1beta1 "github.com/paritylab/paritylab/providers/thirdparty/agentinstall/v1beta1"
)

// InstalledHost is a host an install put into a workload cluster, as the
// cluster's machine API records it: a BareMetalHost of its own, linked to
// a Machine. Only ZTP hosts (hub BareMetalHosts the BMAC manages) are
// recorded; the spoke cannot reach their BMCs, so it gets none.
type InstalledHost struct {
	// BareMetalHost names the host's BareMetalHost in the workload cluster.
	BareMetalHost string
	// Hostname is its Node's name.
	Hostname string
	// Role is master or worker.
	Role agentv1beta1.HostRole
	// BootMACAddress is the MAC the host boots from.
	BootMACAddress string
	// Hardware is what the host's agent measured.
	Hardware *bmov1alpha1.HardwareDetails
}

// ztpHost returns the hub BareMetalHost of an Agent when the BMAC manages
// it (labelled with an InfraEnv), else nil: hosts that a CAPI provider's
// Metal3Machine consumes carry no InfraEnv label.
func (s *Service) ztpHost(ctx context.Context, a *agentv1beta1.Agent) (*bmov1alpha1.BareMetalHost, error) {
	name := a.Labels[agentv1beta1.BareMetalHostLabel]
	if name == "" {
		return nil, nil
	}
	bmh := &bmov1alpha1.BareMetalHost{}
	if err := s.client.Get(ctx, client.ObjectKey{Namespace: a.Namespace, Name: name}, bmh); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, nil
		}
		return nil, fmt.Errorf("BareMetalHost %s of agent %s: %w", name, a.Name, err)
	}
	if bmh.Labels[agentv1beta1.InfraEnvNameLabel] == "" {
		return nil, nil
	}
	return bmh, nil
}

// day1Hosts are the ZTP hosts a finished install put into the cluster,
// in hostname order (the order of in.agents), as the installer's
// install-config lists them.
func (s *Service) day1Hosts(ctx context.Context, in *install) ([]InstalledHost, error) {
	var out []InstalledHost
	for i := range in.agents {
		a := &in.agents[i]
		if a.Status.Kind == agentv1beta1.HostKindAddToExistingClusterHost || a.Status.Progress.CurrentStage != agentv1beta1.HostStageDone {
			continue
		}
		bmh, err := s.ztpHost(ctx, a)
		if err != nil {
			return nil, err
		}
		if bmh != nil {
			h := installedHost(a, bmh)
			// The installer names a host's BareMetalHost after the
			// install-config's hosts[].name, which assisted-service fills
			// with the host name.
			h.BareMetalHost = h.Hostname
			out = append(out, h)
		}
	}
	return out, nil
}

// installedHost describes an installed Agent's host under the name of its
// hub BareMetalHost (as the BMAC names a day-2 host's).
func installedHost(a *agentv1beta1.Agent, bmh *bmov1alpha1.BareMetalHost) InstalledHost {
	return InstalledHost{
		BareMetalHost: bmh.Name, Hostname: hostname(a), Role: effectiveRole(a),
		BootMACAddress: bmh.Spec.BootMACAddress, Hardware: hardwareDetails(a),
	}
}

// hardwareDetails is the agent's inventory as a BareMetalHost's hardware
// details. Interface IPs are left out on purpose: every lab guest is
// 10.0.2.15 behind QEMU user-mode networking, and the nodelink controller
// would match Nodes to Machines by that address.
func hardwareDetails(a *agentv1beta1.Agent) *bmov1alpha1.HardwareDetails {
	inv := a.Status.Inventory
	hw := &bmov1alpha1.HardwareDetails{
		Hostname:     hostname(a),
		CPU:          bmov1alpha1.CPU{Arch: inv.CPU.Architecture, Count: int(inv.CPU.Count)},
		RAMMebibytes: int(inv.Memory.PhysicalBytes >> 20),
	}
	for _, nic := range inv.Interfaces {
		hw.NIC = append(hw.NIC, bmov1alpha1.NIC{Name: nic.Name, MAC: nic.MacAddress})
	}
	for _, d := range inv.Disks {
		// An optical drive's size is the medium in it (the discovery
		// ISO), not a disk of the host.
		if d.DriveType != "ODD" {
			hw.Storage = append(hw.Storage, bmov1alpha1.Storage{Name: d.Name, SizeBytes: bmov1alpha1.Capacity(d.SizeBytes)})
		}
	}
	return hw
}

// day2Machine is the name of a day-2 host's Machine, as the BMAC names it:
// <clusterdeployment>-<baremetalhost>.
func day2Machine(cd, bmh string) string { return cd + "-" + bmh }
