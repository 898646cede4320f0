package results

import (
	"testing"
	"time"
)

// Mutations of the real run's day1 pair: the install of a 3+2 cluster,
// MAPI through classic ZTP, CAPI through the assisted providers.
func day1Mutations() []mutation {
	const s = "day1"
	return []mutation{
		// outcome, errors
		{"capi-flow-failed", s, capiFlowFailed, []string{"outcome", "errors"}},
		{"both-flows-failed-alike", s, bothFlowsFailedAlike, []string{"outcome"}},
		// fixture
		{"capi-host-fewer-cpus", s, capiHostFewerCPUs, []string{"fixture"}},
		// objects
		{"capi-machine-not-ready", s, capiMachineNotReady, []string{"objects/machine/conditions"}},
		{"capi-machine-failed", s, capiMachineFailed, []string{"objects/machine/phases"}},
		{"mapi-machine-stuck-deleting", s, mapiMachineStuckDeleting, []string{"objects/machine/phases"}},
		{"capi-machine-left-paused", s, capiMachineLeftPaused, []string{"objects/machine/conditions", "objects/machine/metadata"}},
		{"capi-machine-without-node-ref", s, capiMachineWithoutNodeRef, []string{"objects/machine/links"}},
		{"capi-machine-provider-id-of-another", s, capiMachineProviderIDOfAnother, []string{"objects/machine/links"}},
		{"capi-machine-set-machines-not-ready", s, capiMachineSetMachinesNotReady, []string{"objects/machine-set/conditions"}},
		{"capi-machine-set-one-of-two-ready", s, capiMachineSetOneOfTwoReady, []string{"objects/machine-set/replicas"}},
		{"mapi-agent-without-infraenv-label", s, mapiAgentWithoutInfraEnvLabel, []string{"objects/agent/metadata"}},
		{"capi-host-provisioned-twice", s, capiHostProvisionedTwice, []string{"objects/host/provisioning"}},
		{"capi-host-given-live-iso", s, capiHostGivenLiveISO, []string{"objects/host/provisioning"}},
		{"capi-hosts-share-user-data", s, capiHostsShareUserData, []string{"objects/host/provisioning"}},
		{"capi-host-stuck-provisioning", s, capiHostStuckProvisioning, []string{"objects/host/phases", "hosts/state"}},
		// nodes
		{"capi-node-not-ready", s, capiNodeNotReady, []string{"nodes/ready"}},
		{"capi-node-missing", s, capiNodeMissing, []string{
			"nodes/count", "nodes/ready", "nodes/roles", "nodes/labels", "nodes/providerID", "nodes/addresses", "nodes/identity", "objects/machine/links"}},
		{"capi-extra-node", s, capiExtraNode, []string{
			"nodes/count", "nodes/ready", "nodes/roles", "nodes/labels", "nodes/providerID", "nodes/addresses", "nodes/identity"}},
		{"mapi-node-left-cordoned", s, mapiNodeLeftCordoned, []string{"nodes/taints"}},
		{"capi-node-without-role-label", s, capiNodeWithoutRoleLabel, []string{"nodes/labels", "nodes/roles"}},
		{"capi-node-without-provider-id", s, capiNodeWithoutProviderID, []string{"nodes/providerID", "objects/machine/links"}},
		// hosts
		{"capi-host-without-consumer", s, capiHostWithoutConsumer, []string{"hosts/consumer"}},
		{"capi-host-extra-power-cycle", s, capiHostExtraPowerCycle, []string{"hosts/bmc"}},
		// milestones, durations
		{"capi-slower-to-running-machines", s, capiSlowerToRunningMachines, []string{"durations/machines-running", "durations/total"}},
		{"milestone-plans-differ", s, milestonePlansDiffer, []string{"milestones", "durations/machines-running", "durations/machines-provisioned"}},
		// events
		{"mapi-machine-create-warning", s, mapiMachineCreateWarning, []string{"events/warnings"}},
		{"mapi-no-provisioning-complete-event", s, mapiNoProvisioningCompleteEvent, []string{"events/normal"}},
	}
}

// The CAPI flow gave up waiting for its Machines.
func capiFlowFailed(t *testing.T, m, c *Observation) {
	fail(c, OutcomeFailed, "timed out waiting for 5 Machines Running")
}

// Both flows failed the same way: nothing says CAPI does what MAPI does.
func bothFlowsFailedAlike(t *testing.T, m, c *Observation) {
	fail(m, OutcomeFailed, "timed out waiting for 3 control-plane agents")
	fail(c, OutcomeFailed, "timed out waiting for 3 control-plane agents")
}

// The CAPI flow ran on a server with fewer CPUs.
func capiHostFewerCPUs(t *testing.T, m, c *Observation) {
	fixtureHost(t, c, "worker-1").CPUs = 2
}

// A CAPI worker Machine ends unhealthy.
func capiMachineNotReady(t *testing.T, m, c *Observation) {
	mach := workerMachine(t, c)
	endCondition(c, mach, "Ready", "False", "NotReady")
	endCondition(c, mach, "Available", "False", "NotReady")
}

// A CAPI worker Machine ends Failed.
func capiMachineFailed(t *testing.T, m, c *Observation) {
	mach := workerMachine(t, c)
	mach.Phases = append(mach.Phases, PhaseTransition{Phase: "Failed", At: c.FinishedAt})
}

// A MAPI worker Machine is still being deleted when the run ends (a
// remediation deleted it, and its deletion never finished).
func mapiMachineStuckDeleting(t *testing.T, m, c *Observation) {
	mach := workerMachine(t, m)
	mach.Phases = append(mach.Phases, PhaseTransition{Phase: "Deleting", At: m.FinishedAt})
}

// A CAPI worker Machine is left paused.
func capiMachineLeftPaused(t *testing.T, m, c *Observation) {
	mach := workerMachine(t, c)
	if mach.Annotations == nil {
		mach.Annotations = map[string]string{}
	}
	mach.Annotations["cluster.x-k8s.io/paused"] = ""
	endCondition(c, mach, "Paused", "True", "Paused")
}

// A CAPI Machine never links its Node.
func capiMachineWithoutNodeRef(t *testing.T, m, c *Observation) {
	workerMachine(t, c).NodeRef = ""
}

// A CAPI Machine ends with another Machine's providerID: its Node's is
// not its own.
func capiMachineProviderIDOfAnother(t *testing.T, m, c *Observation) {
	mach := workerMachine(t, c)
	other := findObject(t, c, "machine", func(o *Object) bool { return live(o) && o.ProviderID != "" && o.ProviderID != mach.ProviderID })
	mach.ProviderID = other.ProviderID
}

// The CAPI MachineSet ends with its Machines not ready.
func capiMachineSetMachinesNotReady(t *testing.T, m, c *Observation) {
	endCondition(c, findObject(t, c, "machine-set", hasReplicas), "MachinesReady", "False", "NotReady")
}

// The CAPI MachineSet ends with one of its two Machines ready.
func capiMachineSetOneOfTwoReady(t *testing.T, m, c *Observation) {
	endReplicas(c, findObject(t, c, "machine-set", hasReplicas), 2, 1, 1)
}

// One of the five ZTP Agents does not name its InfraEnv: an explained
// line shows four times under MAPI and five under CAPI, and the entry
// (agent-provenance) pairs them one to one.
func mapiAgentWithoutInfraEnvLabel(t *testing.T, m, c *Observation) {
	agent := findObject(t, m, "agent", func(o *Object) bool { return o.Labels["infraenvs.agent-install.openshift.io"] != "" })
	delete(agent.Labels, "infraenvs.agent-install.openshift.io")
}

// A CAPI host is provisioned a second time, with new user data.
func capiHostProvisionedTwice(t *testing.T, m, c *Observation) {
	h := hostObject(t, c, "worker-1")
	again := h.Provisioning[len(h.Provisioning)-1]
	again.At = c.FinishedAt
	again.UserData = "sha256:" + hex64('e')
	h.Provisioning = append(h.Provisioning, again)
}

// A CAPI host is given a live ISO where CAPI writes disk images.
func capiHostGivenLiveISO(t *testing.T, m, c *Observation) {
	h := hostObject(t, c, "worker-1")
	h.Provisioning[len(h.Provisioning)-1].Format = "live-iso"
}

// Two CAPI hosts are given the same user data, where each Machine has its
// own.
func capiHostsShareUserData(t *testing.T, m, c *Observation) {
	w0, w1 := hostObject(t, c, "worker-0"), hostObject(t, c, "worker-1")
	w1.Provisioning[0].UserData = w0.Provisioning[0].UserData
}

// A CAPI host never finishes provisioning.
func capiHostStuckProvisioning(t *testing.T, m, c *Observation) {
	obj := hostObject(t, c, "worker-1")
	last := obj.Phases[len(obj.Phases)-1]
	noDrift(t, last.Phase == "provisioned", "provisioned worker-1 host under CAPI")
	obj.Phases = obj.Phases[:len(obj.Phases)-1]
	hostNamed(t, c, "worker-1").ProvisioningState = "provisioning"
}

// A CAPI worker Node is NotReady at the end.
func capiNodeNotReady(t *testing.T, m, c *Observation) {
	workerNode(t, c).Ready = false
}

// A CAPI worker never joins: no Node, no Node record, no nodeRef.
func capiNodeMissing(t *testing.T, m, c *Observation) {
	mach := workerMachine(t, c)
	name := mach.NodeRef
	mach.NodeRef = ""
	c.Nodes = deleteWhere(c.Nodes, func(n Node) bool { return n.Name == name })
	c.Objects = deleteWhere(c.Objects, func(o Object) bool { return o.Role == nodeRole && o.Name == name })
}

// CAPI ends with a sixth Node, which joined during the run.
func capiExtraNode(t *testing.T, m, c *Observation) {
	n := *deepCopy(t, workerNode(t, c))
	n.Name += "0"
	n.UID = "3f0c8e52-5b1d-4c7a-9e43-0d2f6a1b7c99"
	n.Labels["kubernetes.io/hostname"] = n.Name
	n.ProviderID = "metal3://" + c.Cluster + "/spare-0/" + c.Cluster + "-spare-x7k2p"
	c.Nodes = append(c.Nodes, n)
	c.Objects = append(c.Objects, Object{Role: nodeRole, APIVersion: "v1", Kind: "Node", Name: n.Name, UID: n.UID, CreatedAt: c.FinishedAt.Add(-time.Minute)})
}

// A MAPI worker Node is left cordoned.
func mapiNodeLeftCordoned(t *testing.T, m, c *Observation) {
	n := workerNode(t, m)
	n.Taints = append(n.Taints, Taint{Key: "node.kubernetes.io/unschedulable", Effect: "NoSchedule"})
}

// A CAPI worker Node lacks its role label.
func capiNodeWithoutRoleLabel(t *testing.T, m, c *Observation) {
	delete(workerNode(t, c).Labels, "node-role.kubernetes.io/worker")
}

// A CAPI worker Node has no providerID.
func capiNodeWithoutProviderID(t *testing.T, m, c *Observation) {
	workerNode(t, c).ProviderID = ""
}

// A CAPI host ends without a consumer though its Machine runs on it.
func capiHostWithoutConsumer(t *testing.T, m, c *Observation) {
	hostNamed(t, c, "worker-1").ConsumerRef = nil
}

// A CAPI host's BMC is asked for one more power cycle.
func capiHostExtraPowerCycle(t *testing.T, m, c *Observation) {
	h := hostNamed(t, c, "worker-1")
	h.BMC = append(h.BMC, BMCOperation{At: c.FinishedAt, Operation: "power:ForceRestart"})
}

// CAPI takes 150 s more from Ready Nodes to Running Machines (2m33s
// against MAPI's 3 s in the recorded run), which also takes its whole run
// beyond the tolerance (3m48s against 2m14s; MAPI's image cooldown, a
// delay entry's wait, never helps the other flow).
func capiSlowerToRunningMachines(t *testing.T, m, c *Observation) {
	delay(t, c, "machines-running", 150*time.Second)
}

// CAPI's last milestone is another one than MAPI's.
func milestonePlansDiffer(t *testing.T, m, c *Observation) {
	milestone(t, c, "machines-running").Name = "machines-provisioned"
}

// MAPI's Machine controller warns that it failed to create a Machine.
func mapiMachineCreateWarning(t *testing.T, m, c *Observation) {
	warning(m, workerMachine(t, m), "FailedCreate", "InvalidConfiguration: failed to find a host")
}

// MAPI's hosts never report that provisioning completed.
func mapiNoProvisioningCompleteEvent(t *testing.T, m, c *Observation) {
	dropEvents(t, m, "host", "ProvisioningComplete")
}

func deleteWhere[T any](xs []T, drop func(T) bool) []T {
	var out []T
	for _, x := range xs {
		if !drop(x) {
			out = append(out, x)
		}
	}
	return out
}

// hex64 is a SHA-256-sized hex string of one digit.
func hex64(digit byte) string {
	b := make([]byte, 64)
	for i := range b {
		b[i] = digit
	}
	return string(b)
}
