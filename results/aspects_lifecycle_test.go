package results

import (
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestNodeIdentityAspect(t *testing.T) {
	node := func(name, uid string, created int, deleted *time.Time) Object {
		return Object{Role: nodeRole, Kind: "Node", Name: name, UID: uid, CreatedAt: at(created), DeletedAt: deleted}
	}
	o := &Observation{StartedAt: at(0), Objects: []Object{
		node("cp-0", "u1", -60, nil),                                  // kept
		node("w-0", "u2", 10, nil),                                    // joined
		node("w-1", "u3", -60, atPtr(20)), node("w-1", "u4", 25, nil), // recreated: kept → removed, joined
		node("w-2", "u5", 5, atPtr(30)),    // joined, removed
		node("cp-1", "u8", -60, atPtr(55)), // kept, removed
	}}
	got, _ := aspectLines(t, o, "nodes/identity")
	want := []string{"joined", "joined", "joined → removed", "kept", "kept → removed", "kept → removed"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("nodes/identity:\n got  %q\n want %q", got, want)
	}
	for _, a := range Aspects(o) {
		if strings.HasPrefix(a.Name, "objects/node/") {
			t.Errorf("node records are not objects to compare: %s", a.Name)
		}
	}
	if _, ok := aspectLines(t, &Observation{}, "nodes/identity"); ok {
		t.Error("no node records, no nodes/identity")
	}
}

func TestBMCAspect(t *testing.T) {
	ops := func(names ...string) []BMCOperation {
		var out []BMCOperation
		for i, n := range names {
			out = append(out, BMCOperation{Operation: n, At: at(i)})
		}
		return out
	}
	o := &Observation{Hosts: []Host{
		{Name: "cp-0", BMC: ops("power:ForceOff", "media:insert", "boot:Cd/Once", "boot:Cd/Once", "power:On")},
		{Name: "pool-0", Interchangeable: true, BMC: ops("power:On", "power:ForceOff")},
		{Name: "pool-1", Interchangeable: true, BMC: ops("power:On", "power:On", "power:ForceOff", "power:On")},
		{Name: "pool-2", Interchangeable: true},
		{Name: "idle"},
	}}
	got, _ := aspectLines(t, o, "hosts/bmc")
	// Pool hosts count their operations one by one (repeats on one host
	// collapsed first): how they spread over the pool is chance.
	want := []string{
		"power:ForceOff", "power:ForceOff", "power:ForceOff → media:insert → boot:Cd/Once → power:On",
		"power:On", "power:On", "power:On",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("hosts/bmc:\n got  %q\n want %q", got, want)
	}
}

func TestNormalEventsAspect(t *testing.T) {
	o := &Observation{Events: []Event{
		{Role: "machine", Type: "Normal", Reason: "Provisioned", Count: 3},
		{Role: "machine", Type: "Normal", Reason: "Provisioned"},
		{Type: "Normal", Reason: "Scheduled"},
		{Role: "host", Type: "Warning", Reason: "BMCAccessError"},
	}}
	normal, _ := aspectLines(t, o, "events/normal")
	warnings, _ := aspectLines(t, o, "events/warnings")
	// A Normal event about an object without a role (no counterpart in
	// the other flow) is shown in the report but not compared.
	if !reflect.DeepEqual(normal, []string{"machine: Provisioned"}) || !reflect.DeepEqual(warnings, []string{"host: BMCAccessError"}) {
		t.Errorf("normal %q, warnings %q", normal, warnings)
	}
}

// The fixture is what the hosts reported when they did: one line per
// server, the hub's host and its spoke copy (same MACs) being one.
func TestFixtureFromObservedHardware(t *testing.T) {
	hw := func(mem int, mac string) *Hardware {
		return &Hardware{Arch: "x86_64", CPUs: 4, MemoryMiB: mem, NICs: []NIC{{Name: "enp1s0", MAC: mac}}}
	}
	declared := Fixture{Name: "f", Hosts: []FixtureHost{{Name: "a", Hardware: Hardware{CPUs: 2}}}}
	o := &Observation{Fixture: declared, Hosts: []Host{
		{Name: "hub-a", Hardware: hw(8192, "52:54:00:00:00:01")}, {Name: "spoke-a", Hardware: hw(8192, "52:54:00:00:00:01")},
		{Name: "hub-b", Hardware: hw(16384, "52:54:00:00:00:02")}, {Name: "spoke-b"},
	}}
	got, _ := aspectLines(t, o, "fixture")
	want := []string{"fixture f", "host (no hardware reported)",
		"host arch=x86_64 cpus=4 memoryMiB=16384 disks=[] nics=1", "host arch=x86_64 cpus=4 memoryMiB=8192 disks=[] nics=1"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("observed fixture:\n got  %q\n want %q", got, want)
	}
	got, _ = aspectLines(t, &Observation{Fixture: declared}, "fixture")
	if !reflect.DeepEqual(got, []string{"declared host arch=unknown cpus=2 memoryMiB=0 disks=[] nics=0", "fixture f"}) {
		t.Errorf("declared fixture: %q", got)
	}
}

func milestones(reached ...*time.Time) []Milestone {
	var out []Milestone
	for i, r := range reached {
		out = append(out, Milestone{Name: []string{"agents", "installed", "nodes-ready"}[i], ReachedAt: r})
	}
	return out
}

// durations/total runs to the last milestone reached, not to when the
// driver stopped watching.
func TestDurationsEndAtTheLastMilestone(t *testing.T) {
	o := &Observation{StartedAt: at(0), FinishedAt: at(90), Milestones: milestones(atPtr(10), nil, atPtr(30))}
	as := aspectMap(Aspects(o))
	for name, want := range map[string]time.Duration{"durations/total": 30 * time.Minute, "durations/agents": 10 * time.Minute, "durations/nodes-ready": 20 * time.Minute} {
		if a := as[name]; a == nil || *a.Duration != want {
			t.Errorf("%s: %+v, want %s", name, a, want)
		}
	}
	if as["durations/installed"] != nil {
		t.Error("a milestone not reached has no duration")
	}
	if a := as["milestones"]; a == nil || !reflect.DeepEqual(a.Lines, []string{"agents → installed → nodes-ready"}) {
		t.Errorf("milestones: %+v", a)
	}
}

// Different milestone plans, and a milestone one flow did not reach, are
// regressions nothing explains.
func TestMilestoneDifferencesAreRegressions(t *testing.T) {
	pair := func(m, c []Milestone) ScenarioResult {
		mo := &Observation{Flow: FlowMAPI, Outcome: OutcomeSucceeded, StartedAt: at(0), Milestones: m}
		co := &Observation{Flow: FlowCAPI, Outcome: OutcomeSucceeded, StartedAt: at(0), Milestones: c}
		return mustCompare(t, Pair{Scenario: "day1", A: mo, B: co}, builtIn(t), DefaultOptions())
	}
	res := pair(milestones(atPtr(10), atPtr(20)), milestones(atPtr(10), atPtr(20), atPtr(30)))
	if a, _ := res.Aspect("milestones"); a.Verdict != Regression {
		t.Errorf("different plans: %+v", a)
	}
	res = pair(milestones(atPtr(10), atPtr(20), atPtr(30)), milestones(atPtr(10), nil, atPtr(30)))
	if a, _ := res.Aspect("durations/installed"); a.Verdict != Regression || !a.CAPIAbsent || !strings.Contains(a.Note, "MAPI only") {
		t.Errorf("milestone only MAPI reached: %+v", a)
	}
	if a, _ := res.Aspect("milestones"); a.Verdict != Parity {
		t.Errorf("same plan: %+v", a)
	}
}
