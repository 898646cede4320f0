package results

import (
	"fmt"
	"sort"
	"strings"
)

// hostHardwareSummary groups a flow's hosts by the hardware they reported,
// e.g. "10 hosts: x86_64, 4 CPUs, 16384 MiB, 1 disk 120 GiB, 1 NIC". Like
// the fixture aspect, it falls back to the fixture's declaration only when
// no host reported hardware, and says so.
func hostHardwareSummary(o *Observation) string {
	var reported []string
	silent := 0
	for _, h := range o.Hosts {
		if h.Hardware == nil {
			silent++
			continue
		}
		reported = append(reported, hardwareText(*h.Hardware))
	}
	if len(reported) == 0 {
		var declared []string
		for _, h := range o.Fixture.Hosts {
			declared = append(declared, hardwareText(h.Hardware))
		}
		if len(declared) == 0 {
			return ""
		}
		return strings.Join(countedGroups(declared, "host"), "; ") + " (declared by the fixture; no host reported hardware)"
	}
	groups := countedGroups(reported, "host")
	if silent > 0 {
		groups = append(groups, fmt.Sprintf("%s: no hardware reported", plural(silent, "host")))
	}
	return strings.Join(groups, "; ")
}

// countedGroups folds equal texts into "N <noun>s: text", the largest
// group first.
func countedGroups(texts []string, noun string) []string {
	counts := map[string]int{}
	for _, t := range texts {
		counts[t]++
	}
	keys := sortedKeys(counts)
	sort.SliceStable(keys, func(i, j int) bool { return counts[keys[i]] > counts[keys[j]] })
	out := make([]string, 0, len(keys))
	for _, k := range keys {
		out = append(out, plural(counts[k], noun)+": "+k)
	}
	return out
}

// hardwareText describes one host's hardware for people.
func hardwareText(hw Hardware) string {
	var parts []string
	if hw.Arch != "" {
		parts = append(parts, hw.Arch)
	}
	parts = append(parts, plural(hw.CPUs, "CPU"), fmt.Sprintf("%d MiB", hw.MemoryMiB), disksText(hw.Disks), plural(len(hw.NICs), "NIC"))
	return strings.Join(parts, ", ")
}

func disksText(disks []Disk) string {
	if len(disks) == 0 {
		return "no disk"
	}
	sizes := make([]string, 0, len(disks))
	for _, d := range disks {
		sizes = append(sizes, fmt.Sprintf("%d GiB", d.SizeGiB))
	}
	return plural(len(disks), "disk") + " " + strings.Join(sizes, " + ")
}

// plural is "1 host", "2 hosts", "0 entries".
func plural(n int, noun string) string {
	if n == 1 {
		return fmt.Sprintf("1 %s", noun)
	}
	if stem, ok := strings.CutSuffix(noun, "y"); ok {
		return fmt.Sprintf("%d %sies", n, stem)
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
