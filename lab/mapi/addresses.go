package mapi

import (
	"slices"

	bmov1alpha1 "github.com/metal3-io/baremetal-operator/apis/metal3.io/v1alpha1"
	corev1 "k8s.io/api/core/v1"
)

// nodeAddresses are a Machine's addresses from its host: the NICs' IPs
// as InternalIP and the host name as HostName and InternalDNS. The host
// name is the one inspection reported or, as the lab's out-of-band
// inspection reports none, the host's name: the one the config drive's
// metadata gives the node.
func nodeAddresses(h *bmov1alpha1.BareMetalHost) []corev1.NodeAddress {
	var addrs []corev1.NodeAddress
	hostname := h.Name
	if hw := h.Status.HardwareDetails; hw != nil {
		for _, nic := range hw.NIC {
			if nic.IP != "" {
				addrs = append(addrs, corev1.NodeAddress{Type: corev1.NodeInternalIP, Address: nic.IP})
			}
		}
		if hw.Hostname != "" {
			hostname = hw.Hostname
		}
	}
	return append(addrs,
		corev1.NodeAddress{Type: corev1.NodeHostName, Address: hostname},
		corev1.NodeAddress{Type: corev1.NodeInternalDNS, Address: hostname})
}

func addressOf(addrs []corev1.NodeAddress, t corev1.NodeAddressType) string {
	for _, a := range addrs {
		if a.Type == t {
			return a.Address
		}
	}
	return ""
}

func equalAddresses(a, b []corev1.NodeAddress) bool { return slices.Equal(a, b) }
