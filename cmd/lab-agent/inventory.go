package main

import (
	"bufio"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	agentv1beta1 "github.com/paritylab/paritylab/providers/thirdparty/agentinstall/v1beta1"
)

// system reads the machine the agent runs on. Root prefixes /proc and /sys
// so tests can point it at a fake tree; interfaces lists NICs.
type system struct {
	root       string
	interfaces func() ([]net.Interface, error)
}

func newSystem() *system { return &system{root: "/", interfaces: net.Interfaces} }

func (s *system) path(p string) string { return filepath.Join(s.root, p) }

func (s *system) read(p string) string {
	raw, err := os.ReadFile(s.path(p))
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(raw))
}

// hostID is the SMBIOS system UUID, as the real agent uses.
func (s *system) hostID() string { return strings.ToLower(s.read("sys/class/dmi/id/product_uuid")) }

// inventory measures the host.
func (s *system) inventory() agentv1beta1.HostInventory {
	now := metav1.NewTime(time.Now().UTC())
	hostname, _ := os.Hostname()
	return agentv1beta1.HostInventory{
		ReportTime:   &now,
		Hostname:     hostname,
		Memory:       s.memory(),
		CPU:          s.cpu(),
		Interfaces:   s.nics(),
		Disks:        s.disks(),
		Boot:         s.boot(),
		SystemVendor: s.vendor(),
	}
}

func (s *system) memory() agentv1beta1.HostMemory {
	var total int64
	f, err := os.Open(s.path("proc/meminfo"))
	if err == nil {
		defer f.Close()
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			fields := strings.Fields(sc.Text())
			if len(fields) >= 2 && fields[0] == "MemTotal:" {
				kib, _ := strconv.ParseInt(fields[1], 10, 64)
				total = kib * 1024
			}
		}
	}
	// The firmware and kernel keep some memory; a physical size in whole
	// MiB above MemTotal is what dmidecode would report for a VM.
	physical := s.physicalMemory(total)
	return agentv1beta1.HostMemory{PhysicalBytes: physical, UsableBytes: total}
}

// physicalMemory sums the memory blocks the kernel knows (hotplug sysfs),
// falling back to MemTotal.
func (s *system) physicalMemory(usable int64) int64 {
	sizeHex := s.read("sys/devices/system/memory/block_size_bytes")
	blocks, _ := filepath.Glob(s.path("sys/devices/system/memory/memory*"))
	size, err := strconv.ParseInt(sizeHex, 16, 64)
	if err != nil || len(blocks) == 0 {
		return usable
	}
	return size * int64(len(blocks))
}

func (s *system) cpu() agentv1beta1.HostCPU {
	cpu := agentv1beta1.HostCPU{Architecture: runtime.GOARCH}
	if cpu.Architecture == "amd64" {
		cpu.Architecture = "x86_64"
	}
	f, err := os.Open(s.path("proc/cpuinfo"))
	if err != nil {
		return cpu
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		key, value, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		key, value = strings.TrimSpace(key), strings.TrimSpace(value)
		switch key {
		case "processor":
			cpu.Count++
		case "model name":
			cpu.ModelName = value
		case "cpu MHz":
			mhz, _ := strconv.ParseFloat(value, 64)
			cpu.ClockMegahertz = int64(mhz)
		case "flags":
			cpu.Flags = strings.Fields(value)
		}
	}
	if n := s.presentCPUs(); n > 0 {
		cpu.Count = n
	}
	return cpu
}

// presentCPUs counts the CPUs the kernel found (sys/devices/system/cpu/
// present, e.g. "0-3"), online or not: lab guests bring one online
// (maxcpus=1, see guestCmdline in lab/assisted) on hardware of several,
// and the inventory reports the hardware. 0 when unreadable.
func (s *system) presentCPUs() int64 {
	var n int64
	for _, part := range strings.Split(strings.TrimSpace(s.read("sys/devices/system/cpu/present")), ",") {
		lo, hi, isRange := strings.Cut(part, "-")
		first, err := strconv.ParseInt(lo, 10, 64)
		if err != nil {
			return 0
		}
		last := first
		if isRange {
			if last, err = strconv.ParseInt(hi, 10, 64); err != nil || last < first {
				return 0
			}
		}
		n += last - first + 1
	}
	return n
}

func (s *system) nics() []agentv1beta1.HostInterface {
	ifaces, err := s.interfaces()
	if err != nil {
		return nil
	}
	var out []agentv1beta1.HostInterface
	for _, ifc := range ifaces {
		if ifc.Flags&net.FlagLoopback != 0 || len(ifc.HardwareAddr) == 0 {
			continue
		}
		nic := agentv1beta1.HostInterface{
			Name: ifc.Name, MacAddress: ifc.HardwareAddr.String(), Mtu: int64(ifc.MTU),
			IPv4Addresses: []string{}, IPv6Addresses: []string{}, Flags: flagNames(ifc.Flags),
			HasCarrier: s.read("sys/class/net/"+ifc.Name+"/carrier") == "1",
		}
		addrs, _ := ifc.Addrs()
		for _, a := range addrs {
			ipn, ok := a.(*net.IPNet)
			if !ok {
				continue
			}
			if ipn.IP.To4() != nil {
				nic.IPv4Addresses = append(nic.IPv4Addresses, ipn.String())
			} else {
				nic.IPv6Addresses = append(nic.IPv6Addresses, ipn.String())
			}
		}
		out = append(out, nic)
	}
	return out
}

func flagNames(f net.Flags) []string {
	return strings.Split(f.String(), "|")
}

// disks lists block devices: virtio and SCSI disks are install candidates,
// optical drives are listed but not eligible.
func (s *system) disks() []agentv1beta1.HostDisk {
	entries, _ := os.ReadDir(s.path("sys/block"))
	var out []agentv1beta1.HostDisk
	for _, e := range entries {
		name := e.Name()
		if strings.HasPrefix(name, "loop") || strings.HasPrefix(name, "ram") || strings.HasPrefix(name, "zram") {
			continue
		}
		sectors, _ := strconv.ParseInt(s.read("sys/block/"+name+"/size"), 10, 64)
		d := agentv1beta1.HostDisk{
			ID: "/dev/" + name, Name: name, Path: "/dev/" + name,
			SizeBytes: sectors * 512,
			Model:     s.read("sys/block/" + name + "/device/model"),
			Vendor:    s.read("sys/block/" + name + "/device/vendor"),
			Serial:    s.read("sys/block/" + name + "/serial"),
			DriveType: driveType(name, s.read("sys/block/"+name+"/queue/rotational")),
		}
		d.InstallationEligibility = eligibility(d)
		out = append(out, d)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

func driveType(name, rotational string) string {
	switch {
	case strings.HasPrefix(name, "sr"):
		return "ODD"
	case rotational == "0":
		return "SSD"
	}
	return "HDD"
}

// minInstallDiskBytes is the smallest disk the agent offers for install;
// the service applies the per-role minimum on top.
const minInstallDiskBytes = 1 << 30

func eligibility(d agentv1beta1.HostDisk) agentv1beta1.HostInstallationEligibility {
	reasons := []string{}
	if d.DriveType == "ODD" {
		reasons = append(reasons, "Disk is an optical drive")
	}
	if d.SizeBytes < minInstallDiskBytes {
		reasons = append(reasons, "Disk is too small")
	}
	return agentv1beta1.HostInstallationEligibility{Eligible: len(reasons) == 0, NotEligibleReasons: reasons}
}

func (s *system) boot() agentv1beta1.HostBoot {
	mode := "bios"
	if _, err := os.Stat(s.path("sys/firmware/efi")); err == nil {
		mode = "uefi"
	}
	return agentv1beta1.HostBoot{CurrentBootMode: mode}
}

func (s *system) vendor() agentv1beta1.HostSystemVendor {
	v := agentv1beta1.HostSystemVendor{
		Manufacturer: s.read("sys/class/dmi/id/sys_vendor"),
		ProductName:  s.read("sys/class/dmi/id/product_name"),
		SerialNumber: s.read("sys/class/dmi/id/product_serial"),
	}
	// QEMU and the hypervisor CPUID bit give a VM away.
	v.Virtual = strings.Contains(s.read("proc/cpuinfo"), " hypervisor")
	return v
}
