package results

import (
	"fmt"
	"strconv"
	"strings"
)

// hostAspects compares the BareMetalHosts a run touched, in their final
// state. They are always present, so "no hosts touched" is compared too.
func hostAspects(hosts []Host, s *scrubber) []Aspect {
	var states, consumers, errs, annotations []string
	for _, h := range hosts {
		states = append(states, hostState(h))
		consumers = append(consumers, consumerKind(h.ConsumerRef))
		if h.ErrorType != "" {
			errs = append(errs, h.ErrorType)
		}
		annotations = append(annotations, normalizeLabels(h.Annotations, s)...)
	}
	as := []Aspect{
		{Name: "hosts/count", Lines: []string{strconv.Itoa(len(hosts))}},
		{Name: "hosts/state", Lines: states},
		{Name: "hosts/consumer", Lines: consumers},
		{Name: "hosts/errors", Lines: errs},
	}
	if len(annotations) > 0 {
		as = append(as, Aspect{Name: "hosts/annotations", Lines: annotations})
	}
	if bmc := bmcLines(hosts, s); len(bmc) > 0 {
		as = append(as, Aspect{Name: "hosts/bmc", Lines: bmc})
	}
	return as
}

// bmcLines is what each host's BMC was asked to do, with repeats
// collapsed, e.g. "media:insert → boot:Cd/Once → power:On"; hosts whose
// BMC did nothing have no line. Interchangeable hosts count their
// operations one line each: how the operations spread over the pool, and
// so their order on one host (was it used before, is an eject followed by
// an insert), depends on which host a scale-up took, which is chance;
// how many of each the pool got is what the flow did.
func bmcLines(hosts []Host, s *scrubber) []string {
	var lines, pooled []string
	for _, h := range hosts {
		ops := make([]string, 0, len(h.BMC))
		for _, op := range h.BMC {
			ops = append(ops, s.scrub(op.Operation))
		}
		seq := collapseRepeats(ops)
		switch {
		case len(seq) == 0:
		case h.Interchangeable:
			pooled = append(pooled, seq...)
		default:
			lines = append(lines, strings.Join(seq, " → "))
		}
	}
	return append(lines, pooled...)
}

func hostState(h Host) string {
	return fmt.Sprintf("%s operational=%s power=%s online=%t",
		orNone(h.ProvisioningState), orNone(h.OperationalStatus), onOff(h.PoweredOn), h.Online)
}

func onOff(on bool) string {
	if on {
		return "on"
	}
	return "off"
}

// consumerKind is the consumerRef's kind and API group, e.g.
// "Machine.machine.openshift.io"; the name is left out.
func consumerKind(ref *ObjectRef) string {
	if ref == nil {
		return "(none)"
	}
	group, _, ok := strings.Cut(ref.APIVersion, "/")
	switch {
	case ref.APIVersion == "":
		return ref.Kind
	case !ok:
		group = "core"
	}
	return ref.Kind + "." + group
}
