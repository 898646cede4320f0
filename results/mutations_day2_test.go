package results

import (
	"slices"
	"strings"
	"testing"
	"time"
)

// Mutations of the real run's day2-scale pair: a scale set scaled 2, 1,
// 3, 2, 1 (by delete annotation, newest, oldest) on a pool of three
// hosts, then one day-2 worker added the flow's way.
func day2Mutations() []mutation {
	const s = "day2-scale"
	return []mutation{
		// outcome, errors
		{"mapi-flow-timed-out", s, mapiFlowTimedOut, []string{"outcome", "errors"}},
		{"capi-drain-error", s, capiDrainError, []string{"errors"}},
		// fixture
		{"capi-host-smaller-disk", s, capiHostSmallerDisk, []string{"fixture"}},
		// objects
		{"capi-wrong-machine-deleted", s, capiWrongMachineDeleted, []string{"objects/machine/properties"}},
		{"capi-extra-machine", s, capiExtraMachine, []string{"objects/machine/count", "objects/machine/phases"}},
		{"mapi-bmac-machine-labelled-with-cluster-name", s, mapiBMACMachineLabelledWithClusterName, []string{"objects/machine/metadata"}},
		{"capi-scale-set-ends-one-of-two-ready", s, capiScaleSetEndsOneOfTwoReady, []string{"objects/machine-set/replicas"}},
		{"capi-machine-set-still-scaling-down", s, capiMachineSetStillScalingDown, []string{"objects/machine-set/conditions"}},
		{"capi-deleted-machine-infrastructure-kept", s, capiDeletedMachineInfrastructureKept, []string{"objects/machine/conditions"}},
		// nodes
		{"capi-node-left-cordoned", s, capiNodeLeftCordoned, []string{"nodes/taints"}},
		{"capi-node-recreated", s, capiNodeRecreated, []string{"nodes/identity"}},
		// hosts
		{"capi-host-powered-on-after-deprovisioning", s, capiHostPoweredOnAfterDeprovisioning, []string{"hosts/state"}},
		{"capi-host-in-error", s, capiHostInError, []string{"hosts/state", "hosts/errors"}},
		{"mapi-pool-host-media-not-ejected", s, mapiPoolHostMediaNotEjected, []string{"hosts/bmc"}},
		// milestones, durations
		{"capi-day2-worker-never-ready", s, capiDay2WorkerNeverReady, []string{"durations/day2-worker-ready"}},
		// events
		{"capi-machine-deployment-warning", s, capiMachineDeploymentWarning, []string{"events/warnings"}},
		{"capi-no-deprovisioning-complete-event", s, capiNoDeprovisioningCompleteEvent, []string{"events/normal"}},
		{"mapi-machine-deleted-without-drain", s, mapiMachineDeletedWithoutDrain, []string{"events/normal"}},
		{"capi-machines-deleted-without-drain", s, capiMachinesDeletedWithoutDrain, []string{"events/normal"}},
	}
}

// The MAPI flow timed out waiting for the day-2 worker.
func mapiFlowTimedOut(t *testing.T, m, c *Observation) {
	fail(m, OutcomeTimedOut, "timed out waiting for the day-2 worker's Node Ready")
}

// CAPI's Machine controller reports a drain error, though the flow
// succeeded.
func capiDrainError(t *testing.T, m, c *Observation) {
	c.Errors = append(c.Errors, Error{Source: "machine-controller",
		Message: "failed to drain node: cannot evict pod as it would violate the pod's disruption budget", At: c.FinishedAt})
}

// A CAPI pool host reports a smaller disk.
func capiHostSmallerDisk(t *testing.T, m, c *Observation) {
	hw := fixtureHost(t, c, "scale-1")
	hw.Disks[0].SizeGiB = 60
}

// CAPI's newest-first scale-down removed another Machine than the newest.
func capiWrongMachineDeleted(t *testing.T, m, c *Observation) {
	findObject(t, c, "machine", hasProperty("deletion.selectedBy", "newest")).Properties["deletion.selectedBy"] = "other"
}

// CAPI's scale set leaves one Machine more, which never got a host.
func capiExtraMachine(t *testing.T, m, c *Observation) {
	mach := *deepCopy(t, findObject(t, c, "machine", func(o *Object) bool {
		return live(o) && o.Labels["cluster.x-k8s.io/set-name"] != ""
	}))
	mach.Name = mach.Name[:len(mach.Name)-5] + "q7wxz"
	mach.UID = "0b9d1c3e-7f64-4a2b-8e15-6c4d2f9a0e71"
	mach.CreatedAt = c.FinishedAt.Add(-time.Minute)
	mach.Phases = []PhaseTransition{{Phase: "Pending", At: mach.CreatedAt}}
	mach.Conditions, mach.ProviderID, mach.NodeRef, mach.Properties = nil, "", "", nil
	c.Objects = append(c.Objects, mach)
}

// An installer worker Machine carries the ClusterDeployment's name as
// machine.openshift.io/cluster-api-cluster, as only the Machine the BMAC
// writes for the ZTP day-2 worker does: scrubbing must not hide it, and
// the entry for the day-2 Machine must not explain it.
func mapiBMACMachineLabelledWithClusterName(t *testing.T, m, c *Observation) {
	day2 := findObject(t, m, "machine", func(o *Object) bool {
		return live(o) && strings.HasSuffix(o.Annotations["metal3.io/BareMetalHost"], "/day2-worker-0")
	})
	noDrift(t, day2.Labels["machine.openshift.io/cluster-api-cluster"] != "" && m.Cluster != "", "day-2 MAPI Machine with a cluster label")
	mach := findObject(t, m, "machine", func(o *Object) bool {
		return live(o) && o.Labels["machine.openshift.io/cluster-api-machineset"] != ""
	})
	noDrift(t, mach.Labels["machine.openshift.io/cluster-api-cluster"] != m.Cluster, "MachineSet Machine labelled with the infrastructure ID")
	mach.Labels["machine.openshift.io/cluster-api-cluster"] = m.Cluster
}

// CAPI's scale set ends with one of its two Machines ready.
func capiScaleSetEndsOneOfTwoReady(t *testing.T, m, c *Observation) {
	set := findObject(t, c, "machine-set", func(o *Object) bool { return len(o.Replicas) > 1 })
	last := set.Replicas[len(set.Replicas)-1]
	noDrift(t, last.Desired == 2, "CAPI scale set ending at 2 replicas")
	endReplicas(c, set, 2, 1, 1)
}

// A CAPI MachineSet is still scaling down when the run ends.
func capiMachineSetStillScalingDown(t *testing.T, m, c *Observation) {
	endCondition(c, findObject(t, c, "machine-set", hasReplicas), "ScalingDown", "True", "ScalingDown")
}

// A CAPI Machine is gone but its infrastructure was never deleted.
func capiDeletedMachineInfrastructureKept(t *testing.T, m, c *Observation) {
	endCondition(c, findObject(t, c, "machine", deleted), "InfrastructureReady", "True", "Ready")
}

// A CAPI Node is left cordoned.
func capiNodeLeftCordoned(t *testing.T, m, c *Observation) {
	n := workerNode(t, c)
	n.Taints = append(n.Taints, Taint{Key: "node.kubernetes.io/unschedulable", Effect: "NoSchedule"})
}

// A CAPI control-plane Node that should have been kept is deleted and
// recreated under its name.
func capiNodeRecreated(t *testing.T, m, c *Observation) {
	rec := findObject(t, c, nodeRole, func(o *Object) bool {
		n := nodeNamed(c, o.Name)
		return live(o) && o.CreatedAt.Before(c.StartedAt) && n != nil && !isWorker(n)
	})
	gone, back := c.StartedAt.Add(time.Minute), c.StartedAt.Add(2*time.Minute)
	rec.DeletedAt = &gone
	again := Object{Role: nodeRole, APIVersion: rec.APIVersion, Kind: rec.Kind, Name: rec.Name, UID: "5e2a7c10-94d3-4f8b-a6e1-2b7c9d0f3a48", CreatedAt: back}
	c.Objects = append(c.Objects, again)
	nodeNamed(c, rec.Name).UID = again.UID
}

// A CAPI pool host is left powered on after deprovisioning.
func capiHostPoweredOnAfterDeprovisioning(t *testing.T, m, c *Observation) {
	i := slices.IndexFunc(c.Hosts, func(h Host) bool { return h.ProvisioningState == "available" && len(h.BMC) > 0 })
	noDrift(t, i >= 0, "deprovisioned CAPI pool host")
	c.Hosts[i].PoweredOn = true
}

// A CAPI pool host ends in error.
func capiHostInError(t *testing.T, m, c *Observation) {
	i := slices.IndexFunc(c.Hosts, func(h Host) bool { return h.Interchangeable && h.ProvisioningState == "provisioned" })
	noDrift(t, i >= 0, "provisioned CAPI pool host")
	c.Hosts[i].OperationalStatus = "error"
	c.Hosts[i].ErrorType = "provisioning error"
}

// MAPI's pool loses one media eject: a host deprovisioned with its
// virtual media still inserted.
func mapiPoolHostMediaNotEjected(t *testing.T, m, c *Observation) {
	for i := range m.Hosts {
		h := &m.Hosts[i]
		if j := slices.IndexFunc(h.BMC, func(op BMCOperation) bool { return op.Operation == "media:eject" }); j >= 0 {
			h.BMC = slices.Delete(h.BMC, j, j+1)
			return
		}
	}
	t.Fatal("no MAPI host had its media ejected")
}

// CAPI's day-2 worker never gets Ready.
func capiDay2WorkerNeverReady(t *testing.T, m, c *Observation) {
	milestone(t, c, "day2-worker-ready").ReachedAt = nil
}

// CAPI's MachineDeployment (an object without a counterpart) warns.
func capiMachineDeploymentWarning(t *testing.T, m, c *Observation) {
	md := findObject(t, c, "", func(o *Object) bool { return o.Kind == "MachineDeployment" })
	warning(c, md, "ReconcileError", "failed to reconcile MachineSets")
}

// CAPI's deprovisioned hosts never report that deprovisioning completed.
func capiNoDeprovisioningCompleteEvent(t *testing.T, m, c *Observation) {
	dropEvents(t, c, "host", "DeprovisioningComplete")
}

// MAO deletes a Machine without draining its Node: its drain controller
// records DrainSkipped (and still sets Drained=True).
func mapiMachineDeletedWithoutDrain(t *testing.T, m, c *Observation) {
	mach := findObject(t, m, "machine", deleted)
	recordEvent(m, mach, "Normal", "DrainSkipped", "Node drain skipped", *mach.DeletedAt)
}

// CAPI deletes its Machines without draining their Nodes: no
// SuccessfulDrainNode event, where MAO drains (DrainProceeds,
// DrainSucceeded).
func capiMachinesDeletedWithoutDrain(t *testing.T, m, c *Observation) {
	dropEvents(t, c, "machine", "SuccessfulDrainNode")
}
