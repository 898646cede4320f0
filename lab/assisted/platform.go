package assisted

import (
	"fmt"
	"net/netip"
	"slices"
	"strings"

	agentv1beta1 "github.com/paritylab/paritylab/providers/thirdparty/agentinstall/v1beta1"
	hiveextv1beta1 "github.com/paritylab/paritylab/providers/thirdparty/hiveextensions/v1beta1"
)

// clusterNetworking is the platform and networking assisted-service puts
// in effect for a cluster, as it derives them from an AgentClusterInstall
// (clusterdeployments_controller getPlatform and isUserManagedNetwork).
type clusterNetworking struct {
	platform    hiveextv1beta1.PlatformType
	userManaged bool
	// sno is a single control-plane host and no workers.
	sno                  bool
	apiVIPs, ingressVIPs []string
	// machineNetworks are the spec's machine network CIDRs.
	machineNetworks []string
}

// networkingOf derives a cluster's networking. A user-managed network is
// asked for, or implied by a single-node cluster; an empty platform
// leaves the choice to the service, which picks None for user-managed
// networking and BareMetal otherwise; platform None is always
// user-managed.
func networkingOf(aci *hiveextv1beta1.AgentClusterInstall) clusterNetworking {
	spec := aci.Spec
	req := spec.ProvisionRequirements
	n := clusterNetworking{
		sno:         req.ControlPlaneAgents == 1 && req.WorkerAgents == 0,
		apiVIPs:     vips(spec.APIVIPs, spec.APIVIP),
		ingressVIPs: vips(spec.IngressVIPs, spec.IngressVIP),
	}
	n.userManaged = (spec.Networking.UserManagedNetworking != nil && *spec.Networking.UserManagedNetworking) || n.sno
	n.platform = spec.PlatformType
	if n.platform == "" {
		n.platform = hiveextv1beta1.PlatformTypeBareMetal
		if n.userManaged {
			n.platform = hiveextv1beta1.PlatformTypeNone
		}
	}
	if n.platform == hiveextv1beta1.PlatformTypeNone {
		n.userManaged = true
	}
	for _, m := range spec.Networking.MachineNetwork {
		n.machineNetworks = append(n.machineNetworks, m.CIDR)
	}
	return n
}

// withHosts completes the networking with what the hosts report: without
// machine networks in the spec, the service calculates the machine
// network as the host network that holds the API VIP
// (CalculateMachineNetworkCIDR).
func (n clusterNetworking) withHosts(agents []agentv1beta1.Agent) clusterNetworking {
	if len(n.machineNetworks) > 0 || n.userManaged || len(n.apiVIPs) == 0 {
		return n
	}
	vip, err := netip.ParseAddr(n.apiVIPs[0])
	if err != nil {
		return n
	}
	for i := range agents {
		for _, p := range interfacePrefixes(&agents[i]) {
			if p.Masked().Contains(vip) {
				n.machineNetworks = []string{p.Masked().String()}
				return n
			}
		}
	}
	return n
}

// vips are the VIP list, else the older single field.
func vips(list []string, single string) []string {
	if len(list) > 0 || single == "" {
		return list
	}
	return []string{single}
}

// needsVIPs says whether the cluster's load balancing runs on VIPs it
// must be given: a multi-node cluster on cluster-managed networking.
func (n clusterNetworking) needsVIPs() bool { return !n.userManaged && !n.sno }

// record writes the networking in effect into the install's status.
func (n clusterNetworking) record(st *hiveextv1beta1.AgentClusterInstallStatus) {
	st.PlatformType = n.platform
	um := n.userManaged
	st.UserManagedNetworking = &um
	st.APIVIPs, st.IngressVIPs = n.apiVIPs, n.ingressVIPs
	st.APIVIP, st.IngressVIP = first(n.apiVIPs), first(n.ingressVIPs)
	st.MachineNetwork = nil
	for _, c := range n.machineNetworks {
		st.MachineNetwork = append(st.MachineNetwork, hiveextv1beta1.MachineNetworkEntry{CIDR: c})
	}
}

func first(s []string) string {
	if len(s) == 0 {
		return ""
	}
	return s[0]
}

// validations are the cluster's network validations on VIPs, with the
// IDs and messages of assisted-service's cluster validator
// (areVipsDefined, areVipsValid). The VIP is checked against the
// machine network and the addresses the hosts report; upstream checks
// instead that it is among the free addresses the hosts scanned for,
// which the lab's agents do not scan.
func (n clusterNetworking) validations(agents []agentv1beta1.Agent) hiveextv1beta1.ValidationResults {
	return hiveextv1beta1.ValidationResults{
		n.vipsDefined("api-vips-defined", "API", n.apiVIPs),
		n.vipsValid("api-vips-valid", "API", n.apiVIPs, agents),
		n.vipsDefined("ingress-vips-defined", "Ingress", n.ingressVIPs),
		n.vipsValid("ingress-vips-valid", "Ingress", n.ingressVIPs, agents),
	}
}

func (n clusterNetworking) vipsDefined(id, name string, list []string) hiveextv1beta1.ValidationResult {
	switch {
	case n.userManaged:
		return clusterResult(id, validationSuccess, "%s virtual IPs are not required: User Managed Networking", name)
	case n.sno:
		return clusterResult(id, validationSuccess, "%s virtual IPs are not required: SNO", name)
	case len(list) > 0:
		return clusterResult(id, validationSuccess, "%s virtual IPs are defined.", name)
	}
	return clusterResult(id, validationFailure, "%s virtual IPs are undefined and must be provided.", name)
}

func (n clusterNetworking) vipsValid(id, name string, list []string, agents []agentv1beta1.Agent) hiveextv1beta1.ValidationResult {
	switch {
	case n.userManaged:
		return clusterResult(id, validationSuccess, "%s virtual IPs are not required: User Managed Networking", name)
	case n.sno:
		return clusterResult(id, validationSuccess, "%s virtual IPs are not required: SNO", name)
	case len(list) == 0:
		return clusterResult(id, validationPending, "%s virtual IPs are undefined.", name)
	case len(n.machineNetworks) == 0 || !anyInventory(agents):
		return clusterResult(id, validationPending, "Hosts have not been discovered yet")
	}
	label := strings.ToLower(name) + " vips"
	var errs []string
	for i, vip := range list {
		cidr := n.machineNetworks[min(i, len(n.machineNetworks)-1)]
		if msg := vipProblem(label, vip, cidr, agents); msg != "" {
			errs = append(errs, msg)
		}
	}
	if len(errs) > 0 {
		return clusterResult(id, validationFailure, "%s", strings.Join(errs, ";"))
	}
	return clusterResult(id, validationSuccess, "%s %s belongs to the Machine CIDR and is not in use.", label, strings.Join(list, ", "))
}

// vipProblem says why a VIP cannot serve in a machine network, or "".
func vipProblem(label, vip, cidr string, agents []agentv1beta1.Agent) string {
	addr, err := netip.ParseAddr(vip)
	if err != nil {
		return fmt.Sprintf("%s <%s> is not an IP address", label, vip)
	}
	prefix, err := netip.ParsePrefix(cidr)
	if err != nil {
		return fmt.Sprintf("machine-network-cidr <%s> is not a CIDR", cidr)
	}
	switch {
	case !prefix.Contains(addr):
		return fmt.Sprintf("%s <%s> does not belong to machine-network-cidr <%s>", label, vip, cidr)
	case addr.Is4() && addr == lastAddr(prefix.Masked()):
		return fmt.Sprintf("%s <%s> is the broadcast address of machine-network-cidr <%s>", label, vip, cidr)
	case slices.Contains(hostAddrs(agents), addr):
		return fmt.Sprintf("%s <%s> is already in use in cidr %s", label, vip, cidr)
	}
	return ""
}

func lastAddr(p netip.Prefix) netip.Addr {
	b := p.Addr().As4()
	host := uint32(1)<<(32-p.Bits()) - 1
	v := uint32(b[0])<<24 | uint32(b[1])<<16 | uint32(b[2])<<8 | uint32(b[3]) | host
	return netip.AddrFrom4([4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)})
}

func anyInventory(agents []agentv1beta1.Agent) bool {
	return slices.ContainsFunc(agents, func(a agentv1beta1.Agent) bool { return len(a.Status.Inventory.Interfaces) > 0 })
}

// hostAddrs are the addresses the hosts' interfaces report.
func hostAddrs(agents []agentv1beta1.Agent) []netip.Addr {
	var out []netip.Addr
	for i := range agents {
		for _, p := range interfacePrefixes(&agents[i]) {
			out = append(out, p.Addr())
		}
	}
	return out
}

func interfacePrefixes(a *agentv1beta1.Agent) []netip.Prefix {
	var out []netip.Prefix
	for _, nic := range a.Status.Inventory.Interfaces {
		for _, s := range append(slices.Clone(nic.IPv4Addresses), nic.IPv6Addresses...) {
			if p, err := netip.ParsePrefix(s); err == nil {
				out = append(out, p)
			}
		}
	}
	return out
}

// inMachineNetworks is the host validation belongs-to-machine-cidr: on
// cluster-managed networking a host needs an address in every machine
// network.
func (n clusterNetworking) inMachineNetworks(a *agentv1beta1.Agent) (status, message string) {
	switch {
	case n.userManaged:
		return validationSuccess, "No machine network CIDR validation needed: User Managed Networking"
	case len(n.machineNetworks) == 0 || len(a.Status.Inventory.Interfaces) == 0:
		return validationPending, "Missing inventory or machine network CIDR"
	}
	for _, cidr := range n.machineNetworks {
		prefix, err := netip.ParsePrefix(cidr)
		if err != nil || !slices.ContainsFunc(interfacePrefixes(a), func(p netip.Prefix) bool { return prefix.Contains(p.Addr()) }) {
			return validationFailure, "Host does not belong to machine network CIDRs. Verify that the host belongs to every CIDR listed under machine networks"
		}
	}
	return validationSuccess, "Host belongs to all machine network CIDRs"
}

func clusterResult(id, status, format string, args ...any) hiveextv1beta1.ValidationResult {
	return hiveextv1beta1.ValidationResult{ID: id, Status: status, Message: fmt.Sprintf(format, args...)}
}

// failingMessages are the messages of the failing and pending results.
func failingMessages(results hiveextv1beta1.ValidationResults) []string {
	var out []string
	for _, r := range results {
		if r.Status == validationFailure || r.Status == validationPending {
			out = append(out, r.Message)
		}
	}
	return out
}
