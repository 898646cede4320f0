package results

import (
	"fmt"
	"sort"
	"strings"
)

// fixtureAspect is what the flow ran on: the servers' hardware, the
// versions the cluster reported and the cluster's shape. Hardware comes
// from what the hosts reported (Host.Hardware) when any did; only when none
// did is the fixture's declaration used, marked "declared" so that an
// observed fixture never passes for a declared one.
func fixtureAspect(o *Observation, s *scrubber) Aspect {
	f := o.Fixture
	lines := []string{"fixture " + f.Name}
	lines = append(lines, hardwareLines(o)...)
	for _, k := range sortedKeys(f.Versions) {
		lines = append(lines, "version "+k+"="+f.Versions[k])
	}
	for _, k := range sortedKeys(f.Shape) {
		lines = append(lines, fmt.Sprintf("shape %s=%d", k, f.Shape[k]))
	}
	for i := range lines {
		lines[i] = s.scrub(lines[i])
	}
	return Aspect{Name: "fixture", Lines: lines}
}

// hardwareLines is one line per server. BareMetalHosts whose hardware
// lists the same NIC MACs are one server (classic ZTP keeps the hub's host
// and its copy on the spoke); if they report it differently, each
// distinct report is a line.
func hardwareLines(o *Observation) []string {
	var lines []string
	servers := map[string]map[string]bool{}
	for i, h := range o.Hosts {
		if h.Hardware == nil {
			continue
		}
		key := macKey(*h.Hardware)
		if key == "" {
			key = fmt.Sprintf("host #%d", i) // no MAC: a server of its own
		}
		if servers[key] == nil {
			servers[key] = map[string]bool{}
		}
		servers[key]["host "+hardwareLine(*h.Hardware)] = true
	}
	if len(servers) == 0 {
		for _, h := range o.Fixture.Hosts {
			lines = append(lines, "declared host "+hardwareLine(h.Hardware))
		}
		return lines
	}
	for _, h := range o.Hosts {
		if h.Hardware == nil {
			lines = append(lines, "host (no hardware reported)")
		}
	}
	for _, reports := range servers {
		lines = append(lines, sortedKeys(reports)...)
	}
	return lines
}

func macKey(hw Hardware) string {
	macs := make([]string, 0, len(hw.NICs))
	for _, n := range hw.NICs {
		if n.MAC != "" {
			macs = append(macs, strings.ToLower(n.MAC))
		}
	}
	sort.Strings(macs)
	return strings.Join(macs, ",")
}

func hardwareLine(hw Hardware) string {
	disks := make([]string, 0, len(hw.Disks))
	for _, d := range hw.Disks {
		disks = append(disks, fmt.Sprintf("%dGiB", d.SizeGiB))
	}
	sort.Strings(disks)
	arch := hw.Arch
	if arch == "" {
		arch = "unknown"
	}
	return fmt.Sprintf("arch=%s cpus=%d memoryMiB=%d disks=[%s] nics=%d",
		arch, hw.CPUs, hw.MemoryMiB, strings.Join(disks, " "), len(hw.NICs))
}
