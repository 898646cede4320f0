package redfishtest

import (
	"slices"

	"github.com/stmcginnis/gofish/common"
	"github.com/stmcginnis/gofish/redfish"
)

// Hardware is what out-of-band inspection must find on a system. Whether
// or not a Target names it, the runs check that the resources agree: as
// many processors as ProcessorSummary.Count (and as many threads, which
// is how sushy counts CPUs), one instruction set, and the same disk sizes
// under Storage (Drives) and SimpleStorage (Devices).
type Hardware struct {
	// InstructionSet of every processor, e.g. "x86-64"; empty: not checked.
	InstructionSet string
	// DiskBytes are the capacities of the system's disks, in any order;
	// nil: not checked.
	DiskBytes []int64
}

// hardware reads the system's processors and storage the way the lab's
// bare-metal operator inspects a host.
func (g *gofishRun) hardware(sys *redfish.ComputerSystem) {
	g.t.Helper()
	g.processors(sys)
	drives := g.driveSizes(sys)
	devices := g.simpleStorageSizes(sys)
	if !slices.Equal(drives, devices) {
		g.t.Fatalf("gofish: Storage drives of %v bytes, SimpleStorage devices of %v: want the same disks", drives, devices)
	}
	if want := g.target.Hardware; want != nil && want.DiskBytes != nil {
		sorted := slices.Sorted(slices.Values(want.DiskBytes))
		if !slices.Equal(drives, sorted) {
			g.t.Fatalf("gofish: disks of %v bytes, want %v", drives, sorted)
		}
	}
}

func (g *gofishRun) processors(sys *redfish.ComputerSystem) {
	g.t.Helper()
	procs, err := sys.Processors()
	if err != nil {
		g.t.Fatalf("gofish: processors: %v", err)
	}
	count := sys.ProcessorSummary.Count
	if len(procs) != count {
		g.t.Fatalf("gofish: %d processors, ProcessorSummary.Count %d: want the same", len(procs), count)
	}
	threads := 0
	for _, p := range procs {
		threads += p.TotalThreads
		if p.ProcessorType != redfish.CPUProcessorType || p.InstructionSet != procs[0].InstructionSet || p.Status.State != common.EnabledState {
			g.t.Fatalf("gofish: processor %s: type %q, instruction set %q (first: %q), state %q", p.ID, p.ProcessorType, p.InstructionSet, procs[0].InstructionSet, p.Status.State)
		}
	}
	if threads != count {
		g.t.Fatalf("gofish: processors have %d threads in all, ProcessorSummary.Count is %d", threads, count)
	}
	want := g.target.Hardware
	if want != nil && want.InstructionSet != "" && (len(procs) == 0 || string(procs[0].InstructionSet) != want.InstructionSet) {
		g.t.Fatalf("gofish: %d processors, instruction set %v, want %s", len(procs), instructionSets(procs), want.InstructionSet)
	}
}

func instructionSets(procs []*redfish.Processor) []redfish.InstructionSet {
	out := make([]redfish.InstructionSet, len(procs))
	for i, p := range procs {
		out[i] = p.InstructionSet
	}
	return out
}

// driveSizes returns the sizes of the drives under Storage, sorted.
func (g *gofishRun) driveSizes(sys *redfish.ComputerSystem) []int64 {
	g.t.Helper()
	storages, err := sys.Storage()
	if err != nil {
		g.t.Fatalf("gofish: storage: %v", err)
	}
	var sizes []int64
	for _, st := range storages {
		drives, err := st.Drives()
		if err != nil {
			g.t.Fatalf("gofish: drives of storage %s: %v", st.ID, err)
		}
		for _, d := range drives {
			if d.CapacityBytes <= 0 || (d.MediaType != redfish.HDDMediaType && d.MediaType != redfish.SSDMediaType) {
				g.t.Fatalf("gofish: drive %s of %s: %d bytes, media type %q: want a size and HDD or SSD", d.ID, st.ID, d.CapacityBytes, d.MediaType)
			}
			sizes = append(sizes, d.CapacityBytes)
		}
	}
	slices.Sort(sizes)
	return sizes
}

// simpleStorageSizes returns the sizes of the SimpleStorage devices,
// sorted.
func (g *gofishRun) simpleStorageSizes(sys *redfish.ComputerSystem) []int64 {
	g.t.Helper()
	simple, err := sys.SimpleStorages()
	if err != nil {
		g.t.Fatalf("gofish: simple storage: %v", err)
	}
	var sizes []int64
	for _, s := range simple {
		for _, d := range s.Devices {
			sizes = append(sizes, d.CapacityBytes)
		}
	}
	slices.Sort(sizes)
	return sizes
}
