package assisted

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"

	agentv1beta1 "github.com/paritylab/paritylab/providers/thirdparty/agentinstall/v1beta1"
)

// Validation outcomes, as assisted-service reports them.
const (
	validationSuccess = "success"
	validationFailure = "failure"
	validationPending = "pending"
)

// validationInput is what the validations of one host look at.
type validationInput struct {
	agent     *agentv1beta1.Agent
	role      agentv1beta1.HostRole
	min       RoleRequirements
	connected bool
	// peers are the other agents bound to the same cluster.
	peers []agentv1beta1.Agent
	// networking is the bound cluster's; nil for an unbound host.
	networking *clusterNetworking
}

// validate runs the host validations of the lab's assisted service, with
// the IDs and categories assisted-service uses for them.
func validate(in validationInput) agentv1beta1.ValidationsStatus {
	inv := in.agent.Status.Inventory
	hasInventory := inv.CPU.Count > 0
	result := func(id string, ok bool, okMsg, failMsg string) agentv1beta1.ValidationResult {
		switch {
		case !hasInventory && id != "connected":
			return agentv1beta1.ValidationResult{ID: id, Status: validationPending, Message: "Missing inventory"}
		case ok:
			return agentv1beta1.ValidationResult{ID: id, Status: validationSuccess, Message: okMsg}
		}
		return agentv1beta1.ValidationResult{ID: id, Status: validationFailure, Message: failMsg}
	}
	cores, mib := inv.CPU.Count, inv.Memory.PhysicalBytes>>20
	disk := installDisk(in.agent)
	diskGB := disk.SizeBytes / 1e9
	name := hostname(in.agent)
	role := string(in.role)
	hw := agentv1beta1.ValidationResults{
		result("has-inventory", hasInventory, "Valid inventory exists for the host", "Inventory has not been received for the host"),
		result("has-cpu-cores-for-role", cores >= in.min.CPUCores,
			fmt.Sprintf("Sufficient CPU cores for role %s", role),
			fmt.Sprintf("Require at least %d CPU cores for %s role, found only %d", in.min.CPUCores, role, cores)),
		result("has-memory-for-role", mib >= in.min.RAMMiB,
			fmt.Sprintf("Sufficient RAM for role %s", role),
			fmt.Sprintf("Require at least %.2f GiB RAM for role %s, found only %.2f GiB", float64(in.min.RAMMiB)/1024, role, float64(mib)/1024)),
		result("has-min-valid-disks", disk.SizeBytes > 0 && diskGB >= in.min.DiskSizeGB,
			"Sufficient disk capacity",
			fmt.Sprintf("No eligible disks were found; the installation disk needs at least %d GB for role %s (largest eligible: %d GB)", in.min.DiskSizeGB, role, diskGB)),
	}
	network := agentv1beta1.ValidationResults{
		{ID: "connected", Status: okStatus(in.connected), Message: map[bool]string{true: "Host is connected", false: "Host is disconnected"}[in.connected]},
		result("hostname-valid", validHostname(name), fmt.Sprintf("Hostname %s is allowed", name),
			fmt.Sprintf("Hostname %q is forbidden or not a valid DNS name; set the Agent's spec.hostname", name)),
		result("hostname-unique", uniqueHostname(name, in), fmt.Sprintf("Hostname %s is unique in cluster", name),
			fmt.Sprintf("Hostname %s is not unique in cluster: another host of the cluster has it", name)),
	}
	if n := in.networking; n != nil {
		status, msg := n.inMachineNetworks(in.agent)
		network = append(network, agentv1beta1.ValidationResult{ID: "belongs-to-machine-cidr", Status: status, Message: msg})
	}
	return agentv1beta1.ValidationsStatus{"hardware": hw, "network": network}
}

func okStatus(ok bool) string {
	if ok {
		return validationSuccess
	}
	return validationFailure
}

// failing lists the validations that failed, for conditions and state.
func failing(v agentv1beta1.ValidationsStatus) (failed, pending []string) {
	for _, group := range []string{"hardware", "network"} {
		for _, r := range v[group] {
			switch r.Status {
			case validationFailure:
				failed = append(failed, r.Message)
			case validationPending:
				pending = append(pending, r.ID)
			}
		}
	}
	return failed, pending
}

// installDisk is the chosen installation disk: the Agent's spec, else the
// largest eligible disk.
func installDisk(a *agentv1beta1.Agent) agentv1beta1.HostDisk {
	var best agentv1beta1.HostDisk
	for _, d := range a.Status.Inventory.Disks {
		if !d.InstallationEligibility.Eligible {
			continue
		}
		if a.Spec.InstallationDiskID != "" && (d.ID == a.Spec.InstallationDiskID || d.Path == a.Spec.InstallationDiskID) {
			return d
		}
		if d.SizeBytes > best.SizeBytes {
			best = d
		}
	}
	if a.Spec.InstallationDiskID != "" {
		return agentv1beta1.HostDisk{}
	}
	return best
}

// hostname is the Agent's spec hostname, else the one the host reported.
func hostname(a *agentv1beta1.Agent) string {
	if a.Spec.Hostname != "" {
		return a.Spec.Hostname
	}
	return a.Status.Inventory.Hostname
}

func validHostname(name string) bool {
	if name == "" || name == "localhost" || strings.HasPrefix(name, "localhost.") {
		return false
	}
	return len(validation.IsDNS1123Subdomain(name)) == 0
}

func uniqueHostname(name string, in validationInput) bool {
	for i := range in.peers {
		p := &in.peers[i]
		if p.Name != in.agent.Name && hostname(p) == name {
			return false
		}
	}
	return true
}
