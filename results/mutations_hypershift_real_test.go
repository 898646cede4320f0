package results

import (
	"testing"
	"time"
)

// hypershiftMutations are what a regression of the HyperShift scenarios
// looks like in their real run: a migration that disturbed a node or a
// Machine, a private-types flow that left its freed Agent bound. Each
// must show as a regression of exactly the aspects named.
func hypershiftMutations() []mutation {
	const migration, private = ScenarioHyperShiftMigration, ScenarioHyperShiftPrivateTypes
	return []mutation{
		{"migrated-node-recreated", migration, migratedNodeRecreated, []string{"nodes/identity"}},
		{"migrated-machine-provider-id-of-another", migration, migratedMachineProviderIDOfAnother, []string{"objects/machine/links"}},
		{"private-freed-agent-left-bound", private, privateFreedAgentLeftBound, []string{"objects/agent/phases"}},
	}
}

// The migration replaced a Node: the window after it sees the Node
// deleted and joining again under its name.
func migratedNodeRecreated(t *testing.T, a, b *Observation) {
	rec := findObject(t, b, nodeRole, func(o *Object) bool { return live(o) })
	gone, back := b.StartedAt.Add(5*time.Second), b.StartedAt.Add(10*time.Second)
	rec.DeletedAt = &gone
	again := Object{Role: nodeRole, APIVersion: rec.APIVersion, Kind: rec.Kind, Name: rec.Name, UID: "5e2a7c10-94d3-4f8b-a6e1-2b7c9d0f3a48", CreatedAt: back}
	b.Objects = append(b.Objects, again)
	nodeNamed(b, rec.Name).UID = again.UID
}

// A copied Machine names the other Machine's Agent as its provider ID.
func migratedMachineProviderIDOfAnother(t *testing.T, a, b *Observation) {
	machines := objectsOf(b, "machine")
	noDrift(t, len(machines) == 2, "two migrated Machines")
	machines[0].ProviderID = machines[1].ProviderID
}

// The scale-down's Agent is never unbound: it stays added to the cluster.
func privateFreedAgentLeftBound(t *testing.T, a, b *Observation) {
	freed := findObject(t, b, "agent", func(o *Object) bool {
		return len(o.Phases) > 0 && o.Phases[len(o.Phases)-1].Phase == "known-unbound"
	})
	for i, p := range freed.Phases {
		if p.Phase == "unbinding-pending-user-action" {
			freed.Phases = freed.Phases[:i]
			return
		}
	}
	t.Fatalf("the freed Agent %s was never unbinding", freed.Name)
}
