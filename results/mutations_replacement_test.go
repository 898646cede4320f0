package results

import (
	"slices"
	"strings"
	"testing"
	"time"
)

// Mutations of the real run's replacement pairs: a worker's server hangs
// and a MachineHealthCheck has it power-cycled (Metal3Remediation under
// both flows; MAPI's external-baremetal strategy; the same with the BMC
// failing for a while), stays dead until the remediation gives up, or
// two of three fail under a health check limited to one. Each is a
// difference the registry's remediation entries must not explain.
func replacementMutations() []mutation {
	const (
		reboot     = "replacement-reboot"
		annotation = "replacement-reboot-annotation"
		outage     = "replacement-reboot-bmc-outage"
		dead       = "replacement-stays-dead"
		short      = "replacement-short-circuit"
		deadMaster = "replacement-control-plane-stays-dead"
		ownerless  = "replacement-owner-less"
	)
	return []mutation{
		{"capi-admin-label-lost", reboot, capiAdminLabelLost, []string{"objects/machine/properties"}},
		{"capi-machine-replaced", reboot, capiMachineReplaced, []string{"objects/machine/properties"}},
		{"mapi-node-kept", reboot, mapiNodeKept, []string{"objects/machine/properties"}},
		{"capi-remediation-request-failed", reboot, capiRemediationRequestFailed, []string{"objects/machine/conditions"}},
		{"capi-health-check-short-circuited", reboot, capiHealthCheckShortCircuited, []string{"objects/health-check/conditions"}},
		{"capi-two-remediation-requests", annotation, capiTwoRemediationRequests, []string{"objects/remediation/count"}},
		{"capi-host-power-cycled-twice", outage, capiHostPowerCycledTwice, []string{"hosts/bmc"}},
		{"mapi-host-left-in-error", outage, mapiHostLeftInError, []string{"hosts/state", "hosts/errors"}},
		{"capi-bmc-recovered-late", outage, capiBMCRecoveredLate, []string{"durations/bmc-recovered", "durations/total"}},
		{"capi-replacement-on-dead-host", dead, capiReplacementOnDeadHost, []string{"objects/machine/properties"}},
		{"mapi-gave-up-host-unmarked", dead, mapiGaveUpHostUnmarked, []string{"hosts/annotations"}},
		{"capi-short-circuit-remediates", short, capiShortCircuitRemediates, []string{"objects/health-check/properties"}},
		{"capi-short-circuit-not-restricted", short, capiShortCircuitNotRestricted, []string{"objects/health-check/conditions"}},
		{"capi-short-circuit-power-off", short, capiShortCircuitPowerOff, []string{"hosts/bmc"}},
		{"mapi-dead-master-node-kept", deadMaster, mapiDeadMasterNodeKept, []string{"objects/machine/properties"}},
		{"capi-dead-master-replaced", deadMaster, capiDeadMasterReplaced, []string{"objects/machine/properties"}},
		{"mapi-owner-less-machine-deleted", ownerless, mapiOwnerlessMachineDeleted, []string{"objects/machine/properties"}},
		{"capi-owner-less-node-kept", ownerless, capiOwnerlessNodeKept, []string{"objects/machine/properties"}},
	}
}

// remediatedMachine is the worker Machine a run remediated.
func remediatedMachine(t *testing.T, o *Observation) *Object {
	t.Helper()
	return findObject(t, o, "machine", func(obj *Object) bool { return obj.Properties["remediation.machine"] != "" })
}

// CAPI's remediation loses the admin's Node label and annotation.
func capiAdminLabelLost(t *testing.T, m, c *Observation) {
	remediatedMachine(t, c).Properties["remediation.adminLabelAndAnnotation"] = "lost"
}

// CAPI replaces the Machine instead of rebooting its host.
func capiMachineReplaced(t *testing.T, m, c *Observation) {
	remediatedMachine(t, c).Properties["remediation.machine"] = "replaced"
}

// MAPI's remediation keeps the Node: a behaviour the node-deletion entry
// does not name in full (it requires both of MAPI's lines).
func mapiNodeKept(t *testing.T, m, c *Observation) {
	mach := remediatedMachine(t, m)
	noDrift(t, mach.Properties["remediation.nodeUID"] == "new", "MAPI Node recreated")
	mach.Properties["remediation.nodeUID"] = "same"
}

// CAPI's MachineHealthCheck could not create the remediation request:
// the leftover state is explained only with its own reason.
func capiRemediationRequestFailed(t *testing.T, m, c *Observation) {
	endCondition(c, remediatedMachine(t, c), "ExternallyRemediated", "False", "RemediationRequestCreationFailed")
}

// CAPI's MachineHealthCheck ends short-circuited.
func capiHealthCheckShortCircuited(t *testing.T, m, c *Observation) {
	endCondition(c, findObject(t, c, "health-check", live), "RemediationAllowed", "False", "TooManyUnhealthy")
}

// CAPI's MachineHealthCheck made two requests for one Machine.
func capiTwoRemediationRequests(t *testing.T, m, c *Observation) {
	req := *deepCopy(t, findObject(t, c, "remediation", func(*Object) bool { return true }))
	req.Name += "-2"
	req.UID = "5d0c6f1e-2b7a-4c3d-9e8f-1a2b3c4d5e6f"
	c.Objects = append(c.Objects, req)
}

// CAPI's host is power-cycled twice once its BMC recovers.
func capiHostPowerCycledTwice(t *testing.T, m, c *Observation) {
	for i := range c.Hosts {
		h := &c.Hosts[i]
		if j := slices.IndexFunc(h.BMC, func(op BMCOperation) bool { return op.Operation == "power:On" }); j >= 0 {
			at := h.BMC[j].At
			h.BMC = slices.Insert(h.BMC, j+1, BMCOperation{At: at.Add(time.Second), Operation: "power:ForceOff"},
				BMCOperation{At: at.Add(2 * time.Second), Operation: "power:On"})
			return
		}
	}
	t.Fatal("no CAPI host was powered on")
}

// MAPI's host is left in error after its BMC recovered.
func mapiHostLeftInError(t *testing.T, m, c *Observation) {
	i := slices.IndexFunc(m.Hosts, func(h Host) bool { return h.ProvisioningState == "provisioned" })
	noDrift(t, i >= 0, "provisioned MAPI pool host")
	m.Hosts[i].OperationalStatus = "error"
	m.Hosts[i].ErrorType = "provisioned registration error"
}

// CAPI's flow takes two minutes more to see its BMC recover.
func capiBMCRecoveredLate(t *testing.T, m, c *Observation) {
	delay(t, c, "bmc-recovered", 2*time.Minute)
}

// CAPI's replacement, after the dead Machine was deleted by hand, lands
// on the dead host: the entry names the pool's other host.
func capiReplacementOnDeadHost(t *testing.T, m, c *Observation) {
	mach := findObject(t, c, "machine", func(obj *Object) bool { return obj.Properties["remediation.replacement"] != "" })
	got := mach.Properties["remediation.replacement"]
	noDrift(t, strings.Contains(got, "pool's other host"), "CAPI replacement on the pool's other host")
	mach.Properties["remediation.replacement"] = strings.Replace(got, "the pool's other host", "the dead host", 1)
}

// MAPI's remediation gives up without marking the host: the entry pairs
// the two keys one to one.
func mapiGaveUpHostUnmarked(t *testing.T, m, c *Observation) {
	for i := range m.Hosts {
		if _, ok := m.Hosts[i].Annotations["capi.metal3.io/unhealthy"]; ok {
			delete(m.Hosts[i].Annotations, "capi.metal3.io/unhealthy")
			return
		}
	}
	t.Fatal("no MAPI host marked unhealthy")
}

// CAPI's MachineHealthCheck would have remediated one of the two.
func capiShortCircuitRemediates(t *testing.T, m, c *Observation) {
	mhc := findObject(t, c, "health-check", func(obj *Object) bool { return obj.Properties["status.during"] != "" })
	noDrift(t, mhc.Properties["status.during"] == "expected=3 healthy=1 remediationsAllowed=0", "CAPI short-circuit status")
	mhc.Properties["status.during"] = "expected=3 healthy=1 remediationsAllowed=1"
}

// CAPI's MachineHealthCheck ends allowing remediation: the restricted
// entry pins False(TooManyUnhealthy) on both sides.
func capiShortCircuitNotRestricted(t *testing.T, m, c *Observation) {
	endCondition(c, findObject(t, c, "health-check", live), "RemediationAllowed", "True", "RemediationAllowed")
}

// A hung CAPI worker's host is powered off while remediation is
// restricted.
func capiShortCircuitPowerOff(t *testing.T, m, c *Observation) {
	for i := range c.Hosts {
		h := &c.Hosts[i]
		if len(h.BMC) > 0 {
			at := h.BMC[len(h.BMC)-1].At
			h.BMC = append(h.BMC, BMCOperation{At: at.Add(time.Second), Operation: "power:ForceOff"})
			return
		}
	}
	t.Fatal("no CAPI host with a BMC operation")
}

// deadMaster is the control-plane Machine whose host stayed dead.
func deadMaster(t *testing.T, o *Observation) *Object {
	t.Helper()
	return findObject(t, o, "machine", func(obj *Object) bool { return obj.Properties["remediation.deadNode"] != "" })
}

// MAPI's remediation leaves the dead master's Node in place: the fate
// entry pins "gone".
func mapiDeadMasterNodeKept(t *testing.T, m, c *Observation) {
	mach := deadMaster(t, m)
	noDrift(t, mach.Properties["remediation.deadNode"] == "gone", "MAPI dead master's Node")
	mach.Properties["remediation.deadNode"] = "kept, NotReady, taints none"
}

// CAPI's control plane replaces the dead master after all.
func capiDeadMasterReplaced(t *testing.T, m, c *Observation) {
	mach := deadMaster(t, c)
	noDrift(t, strings.HasPrefix(mach.Properties["remediation.afterGaveUp"], "no Machine replaced"), "CAPI after giving up")
	mach.Properties["remediation.afterGaveUp"] = "the Machine replaced by the control plane"
}

// outcomeMachine is the day-2 worker's Machine of an owner-less run.
func outcomeMachine(t *testing.T, o *Observation) *Object {
	t.Helper()
	return findObject(t, o, "machine", func(obj *Object) bool { return obj.Properties["remediation.outcome"] != "" })
}

// MAO deletes the owner-less Machine after all, as if it had an owner.
func mapiOwnerlessMachineDeleted(t *testing.T, m, c *Observation) {
	mach := outcomeMachine(t, m)
	noDrift(t, mach.Properties["remediation.machine"] == "same", "MAPI owner-less Machine")
	mach.Properties["remediation.machine"] = "replaced"
}

// CAPI replaces the Machine but leaves the hung worker's Node behind.
func capiOwnerlessNodeKept(t *testing.T, m, c *Observation) {
	mach := outcomeMachine(t, c)
	noDrift(t, mach.Properties["remediation.deadNode"] == "gone", "CAPI replaced Machine's Node")
	mach.Properties["remediation.deadNode"] = "kept, NotReady, taints none"
}
