package results

import (
	"fmt"
	"sort"
	"strings"
	"time"
)

// Aspect is one comparable fact of an Observation after normalisation:
// names, UIDs, addresses and timestamps are gone, so the same behaviour
// gives the same Aspect in both flows.
type Aspect struct {
	// Name is "area/detail", e.g. nodes/providerID or objects/machine/phases.
	Name string `json:"name"`
	// Lines are the normalised values, sorted; two aspects are compared as
	// multisets of lines.
	Lines []string `json:"lines"`
	// Duration is set on duration aspects, which are compared as a ratio
	// within a tolerance instead of line by line.
	Duration *time.Duration `json:"duration,omitempty"`
}

// Aspect areas, in report order.
var areaOrder = []string{"outcome", "fixture", "objects", "nodes", "hosts", "durations", "events", "errors"}

// Aspects normalises o into its comparable aspects, sorted by area and name.
// It does not change o.
func Aspects(o *Observation) []Aspect {
	s := newScrubber(o)
	as := []Aspect{
		{Name: "outcome", Lines: []string{string(o.Outcome)}},
		fixtureAspect(o.Fixture, s),
	}
	as = append(as, objectAspects(o.Objects, s)...)
	as = append(as, nodeAspects(o.Nodes, s)...)
	as = append(as, hostAspects(o.Hosts, s)...)
	as = append(as, durationAspects(o)...)
	as = append(as, warningAspect(o.Events, s), errorAspect(o.Errors, s))
	for i := range as {
		sort.Strings(as[i].Lines)
	}
	sortAspects(as)
	return as
}

// aspectRank orders aspect names: by area, then by name.
func aspectRank(name string) int {
	area, _, _ := strings.Cut(name, "/")
	for i, a := range areaOrder {
		if a == area {
			return i
		}
	}
	return len(areaOrder)
}

func aspectLess(a, b string) bool {
	ra, rb := aspectRank(a), aspectRank(b)
	if ra != rb {
		return ra < rb
	}
	return a < b
}

func sortAspects(as []Aspect) {
	sort.SliceStable(as, func(i, j int) bool { return aspectLess(as[i].Name, as[j].Name) })
}

func fixtureAspect(f Fixture, s *scrubber) Aspect {
	lines := []string{"fixture " + f.Name}
	for _, h := range f.Hosts {
		lines = append(lines, "host "+hardwareLine(h.Hardware))
	}
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

func durationAspects(o *Observation) []Aspect {
	as := []Aspect{durationAspect("durations/total", o.FinishedAt.Sub(o.StartedAt))}
	for _, p := range o.Phases() {
		as = append(as, durationAspect("durations/"+p.Name, p.Duration()))
	}
	return as
}

func durationAspect(name string, d time.Duration) Aspect {
	return Aspect{Name: name, Lines: []string{formatDuration(d)}, Duration: &d}
}

// formatDuration rounds d for people: to the second above a minute, to the
// millisecond below.
func formatDuration(d time.Duration) string {
	if d >= time.Minute || d <= -time.Minute {
		return d.Round(time.Second).String()
	}
	return d.Round(time.Millisecond).String()
}

func warningAspect(events []Event, s *scrubber) Aspect {
	set := map[string]bool{}
	for _, e := range events {
		if e.Type != "Warning" {
			continue
		}
		line := e.Reason
		if e.Role != "" {
			line = e.Role + ": " + e.Reason
		}
		set[s.scrub(line)] = true
	}
	return Aspect{Name: "events/warnings", Lines: sortedKeys(set)}
}

func errorAspect(errs []Error, s *scrubber) Aspect {
	set := map[string]bool{}
	for _, e := range errs {
		set[s.scrub(e.Source+": "+e.Message)] = true
	}
	return Aspect{Name: "errors", Lines: sortedKeys(set)}
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
