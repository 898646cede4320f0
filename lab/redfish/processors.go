package redfish

import (
	"fmt"
	"net/http"
)

// A system's Processors collection has one member per CPU the system
// counts, CPU0 ... CPU<n-1>, as sushy-tools' libvirt driver serves a
// domain's vCPUs. Each has one core and one thread: sushy (and so Ironic)
// counts a system's CPUs as the sum of its processors' TotalThreads, which
// must equal ProcessorSummary.Count.

func processorID(i int) string { return fmt.Sprintf("CPU%d", i) }

func (s *Server) listProcessors(w http.ResponseWriter, _ *http.Request, rq *request) error {
	sys := rq.system
	paths := make([]string, sys.Processors)
	for i := range paths {
		paths[i] = processorPath(sys.ID, processorID(i))
	}
	writeJSON(w, http.StatusOK, collection("#ProcessorCollection.ProcessorCollection", processorsPath(sys.ID), "Processors Collection", paths))
	return nil
}

func (s *Server) getProcessor(w http.ResponseWriter, _ *http.Request, rq *request) error {
	sys, id := rq.system, rq.param("processor")
	for i := range sys.Processors {
		if processorID(i) == id {
			writeJSON(w, http.StatusOK, processorResource(sys, i))
			return nil
		}
	}
	return errResourceNotFound("Processor", id)
}

func processorResource(sys *System, i int) resource {
	id := processorID(i)
	r := resource{
		"@odata.type":   "#Processor.v1_3_0.Processor",
		"@odata.id":     processorPath(sys.ID, id),
		"Id":            id,
		"Name":          "Processor",
		"Socket":        fmt.Sprintf("CPU %d", i),
		"ProcessorType": "CPU",
		"TotalCores":    1,
		"TotalThreads":  1,
		"Status":        resource{"State": "Enabled", "Health": "OK"},
	}
	// Unknown facts are left out rather than guessed: a client that
	// reads no architecture reports none, which is the truth.
	if a, ok := CPUArchitecture(sys.Arch); ok {
		r["ProcessorArchitecture"] = a.Architecture
		r["InstructionSet"] = a.InstructionSet
	}
	if sys.CPUModel != "" {
		r["Model"] = sys.CPUModel
	}
	return r
}
