package assisted

import (
	"encoding/json"
	"fmt"

	"github.com/paritylab/paritylab/lab/assisted/agentapi"
	"github.com/paritylab/paritylab/lab/images"
)

// Labels of the guest images. GRUB boots an image by its label, and a
// host may hold a discovery ISO on its CD while its disk holds a node image.
const (
	discoveryLabel = "PL_DISCOVERY"
	nodeLabel      = "PL_NODE"
)

// guestModules are the kernel modules guests load: the virtio NIC and disk,
// entropy, and what reading a config drive from the SATA CD-ROM takes.
var guestModules = []string{"virtio_pci", "virtio_net", "virtio_blk", "virtio_rng", "ahci", "sr_mod", "isofs"}

// guestInit is PID 1 of every lab guest image: busybox, modules, DHCP on
// the first NIC (QEMU user-mode networking answers; the gateway is the
// host), the hostname from the SMBIOS serial, then the agent.
const guestInit = `#!/bin/sh
/bin/busybox --install -s
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
mkdir -p /run /tmp
` + images.LoadModules + `
ip link set lo up
for i in $(seq 1 100); do IF=$(ls /sys/class/net | grep -v '^lo$' | head -n 1); [ -n "$IF" ] && break; sleep 0.1; done
ip link set "$IF" up
udhcpc -i "$IF" -q -n -t 60 -T 1 -s /etc/paritylab/udhcpc.sh
hostname "$(cat /sys/class/dmi/id/product_serial 2>/dev/null || echo lab-host)"
echo "paritylab guest $(cat /etc/paritylab/image) up on $IF: $(ip -4 addr show "$IF" | grep inet)" > /dev/ttyS0
/bin/lab-agent boot > /dev/ttyS0 2>&1
echo "lab-agent exited with $?" > /dev/ttyS0
while :; do sleep 3600; done
`

// udhcpcScript applies a DHCP lease (busybox udhcpc calls it).
const udhcpcScript = `#!/bin/sh
case "$1" in
bound|renew)
	ifconfig "$interface" "$ip" netmask "${subnet:-255.255.255.0}"
	route del default 2>/dev/null
	route add default gw "$router" dev "$interface"
	;;
esac
`

// guestCmdline shows the kernel's warnings and errors on the serial
// console but not its boot chatter (full verbosity costs ~2 s per boot,
// measured 10.6-13.5 s to the agent at loglevel=7), skips the crypto
// self-tests (they cost boot time; the guests use no kernel crypto they
// would vouch for) and brings one CPU online (maxcpus=1).
//
// One CPU, because under TCG a multi-vCPU guest now and then hangs for
// good: an inter-processor call is never answered, and a CPU spins in
// csd_lock_wait (a parity run's CAPI scale-up host, four vCPUs: "soft
// lockup - CPU#3 stuck" from 28 s after boot for 7 minutes, RIP fixed on
// the csd lock's pause loop, the other vCPUs waiting on it; an earlier
// run's worker the same way inside cryptomgr_test). The domain keeps its
// vCPUs as hardware: the kernel lists them as present, and the agent
// reports those (cmd/lab-agent, cpu).
const guestCmdline = "console=ttyS0 loglevel=4 cryptomgr.notests maxcpus=1"

// guestImage describes one of the lab's guest images.
type guestImage struct {
	kind  string
	label string
	// discovery, when set, is baked in (an InfraEnv's own ISO).
	discovery *agentapi.DiscoveryConfig
}

func (g guestImage) spec(agent string) (images.ISOSpec, error) {
	files := []images.File{
		{Path: "/bin/lab-agent", Mode: 0o755, Source: agent},
		{Path: agentapi.ImageKindFile, Content: []byte(g.kind)},
		{Path: "/etc/paritylab/udhcpc.sh", Mode: 0o755, Content: []byte(udhcpcScript)},
	}
	if g.discovery != nil {
		raw, err := json.Marshal(g.discovery)
		if err != nil {
			return images.ISOSpec{}, fmt.Errorf("encode discovery config: %w", err)
		}
		files = append(files, images.File{Path: agentapi.DiscoveryConfigFile, Mode: 0o600, Content: raw})
	}
	return images.ISOSpec{
		Label:     g.label,
		Cmdline:   guestCmdline,
		Initramfs: images.InitramfsSpec{Init: guestInit, Files: files, Modules: guestModules},
	}, nil
}

// buildImage builds (or finds in the cache) a guest image.
func buildImage(store *images.Store, agent string, g guestImage) (string, error) {
	spec, err := g.spec(agent)
	if err != nil {
		return "", err
	}
	return store.ISO(spec)
}

// DiscoveryImage is an InfraEnv's discovery ISO, its config baked in.
func DiscoveryImage(store *images.Store, agent string, cfg agentapi.DiscoveryConfig) (string, error) {
	return buildImage(store, agent, guestImage{kind: agentapi.ImageDiscovery, label: discoveryLabel, discovery: &cfg})
}

// GenericDiscoveryImage is a discovery image that reads its InfraEnv from
// a config-2 drive: what a provisioner writes to a disk (or boots as a live
// ISO) with user data from a bootstrap provider.
func GenericDiscoveryImage(store *images.Store, agent string) (string, error) {
	return buildImage(store, agent, guestImage{kind: agentapi.ImageDiscovery, label: discoveryLabel})
}

// NodeImage is what installation writes to a host's disk: the node agent,
// which joins the workload cluster with the config written after the image
// (or from a config-2 drive).
func NodeImage(store *images.Store, agent string) (string, error) {
	return buildImage(store, agent, guestImage{kind: agentapi.ImageNode, label: nodeLabel})
}
