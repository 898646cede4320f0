package results

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
)

// The mutation suite proves the verdict can fail. It starts from the
// observations of a real, passing run (testdata/real), which must be
// parity, and changes them the way a real divergence would show: a
// Machine left unhealthy, a host left powered on, a Node left cordoned, a
// flow slower or failed. Every mutation must make the report fail with a
// Regression in exactly the aspects it is about, through the whole
// pipeline (scrubbing, aspects, registry, verdict): mutations change the
// observations, never aspect lines. The mutations are in
// mutations_day1_test.go and mutations_day2_test.go.

// realDir holds the observations of a real, passing run (see its README).
const realDir = "testdata/real"

// realPairs loads the real run's pairs: day1 and day2-scale, both flows.
func realPairs(t testing.TB) []Pair {
	t.Helper()
	pairs, err := LoadDir(realDir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, p := range pairs {
		if p.A == nil || p.B == nil {
			t.Fatalf("%s: scenario %s lacks a flow", realDir, p.Scenario)
		}
		names = append(names, p.Scenario)
	}
	want := []string{"day1", "day2-scale", "disconnected", "hypershift-migration", "hypershift-private-types", "replacement-control-plane", "replacement-control-plane-stays-dead", "replacement-owner-less", "replacement-reboot", "replacement-reboot-annotation", "replacement-reboot-bmc-outage", "replacement-short-circuit", "replacement-stays-dead", "upgrade"}
	if !slices.Equal(names, want) {
		t.Fatalf("%s holds scenarios %v, want %v", realDir, names, want)
	}
	return pairs
}

// deepCopy copies v through its JSON form.
func deepCopy[T any](t testing.TB, v *T) *T {
	t.Helper()
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var c T
	if err := json.Unmarshal(data, &c); err != nil {
		t.Fatal(err)
	}
	return &c
}

func clonePairs(t testing.TB, pairs []Pair) []Pair {
	t.Helper()
	out := make([]Pair, len(pairs))
	for i, p := range pairs {
		out[i] = Pair{Scenario: p.Scenario, A: deepCopy(t, p.A), B: deepCopy(t, p.B)}
	}
	return out
}

// The real run is parity: it passes against the built-in registry, with
// no regression and no stale entry.
func TestRealRunIsParity(t *testing.T) {
	r := mustBuild(t, realPairs(t), builtIn(t), DefaultOptions())
	c := r.Counts()
	if r.Failed() || c.Regression != 0 || c.Stale != 0 || len(r.Scenarios) != 14 {
		t.Fatalf("the real run must pass: %s", r.Summary())
	}
	if c.Aspects < 60 || c.KnownDivergence == 0 || c.Parity == 0 {
		t.Fatalf("the real run has fewer aspects than it should: %s", r.Summary())
	}
}

// mutation is a real divergence modelled on the real run: mutate changes
// deep copies of the scenario's observations (m is MAPI's, c is CAPI's);
// regressed are the aspects that must then be regressions, and the only
// ones.
type mutation struct {
	name      string
	scenario  string
	mutate    func(t *testing.T, m, c *Observation)
	regressed []string
}

func allMutations() []mutation {
	return slices.Concat(day1Mutations(), day2Mutations(), replacementMutations(), upgradeMutations(), disconnectedMutations(), hypershiftMutations())
}

func TestMutationsOfTheRealRunFail(t *testing.T) {
	reg, base := builtIn(t), realPairs(t)
	for _, mu := range allMutations() {
		t.Run(mu.scenario+"/"+mu.name, func(t *testing.T) {
			pairs := clonePairs(t, base)
			i := slices.IndexFunc(pairs, func(p Pair) bool { return p.Scenario == mu.scenario })
			if i < 0 {
				t.Fatalf("no scenario %s in the real run", mu.scenario)
			}
			mu.mutate(t, pairs[i].A, pairs[i].B)
			for _, o := range []*Observation{pairs[i].A, pairs[i].B} {
				if err := o.Validate(); err != nil {
					t.Fatalf("the mutated %s observation is not one a driver could write: %v", o.Flow, err)
				}
			}
			r := mustBuild(t, pairs, reg, DefaultOptions())
			if !r.Failed() {
				t.Errorf("the report passes: %s", r.Summary())
			}
			for _, s := range r.Scenarios {
				got := regressions(s)
				want := []string(nil)
				if s.Scenario == mu.scenario {
					want = mu.regressed
				}
				if !slices.Equal(got, sorted(want)) {
					t.Errorf("%s: regressions %v, want %v\n%s", s.Scenario, got, sorted(want), verdictsOf(s, want))
				}
			}
		})
	}
}

// regressions are the names of the scenario's aspects that are
// regressions, sorted.
func regressions(s ScenarioResult) []string {
	var out []string
	for _, a := range s.Aspects {
		if a.Verdict == Regression {
			out = append(out, a.Aspect)
		}
	}
	return sorted(out)
}

func sorted(xs []string) []string {
	out := slices.Clone(xs)
	slices.Sort(out)
	return out
}

// verdictsOf says what became of the wanted aspects and of the
// regressions, for a failure message.
func verdictsOf(s ScenarioResult, want []string) string {
	var b strings.Builder
	for _, a := range s.Aspects {
		if a.Verdict != Regression && !slices.Contains(want, a.Aspect) {
			continue
		}
		var known []string
		for _, e := range a.Known {
			known = append(known, e.ID)
		}
		fmt.Fprintf(&b, "  %s: %s (known %v) only MAPI %q only CAPI %q %s\n", a.Aspect, a.Verdict, known, a.OnlyMAPI, a.OnlyCAPI, a.Note)
	}
	return b.String()
}

// The mutations cover every aspect family in both scenarios.
func TestMutationsCoverEveryAspectFamily(t *testing.T) {
	families := map[string]bool{}
	scenarios := map[string]int{}
	for _, mu := range allMutations() {
		scenarios[mu.scenario]++
		if len(mu.regressed) == 0 {
			t.Errorf("%s: name the aspects it regresses", mu.name)
		}
		for _, a := range mu.regressed {
			families[aspectFamily(a)] = true
		}
	}
	if n := len(allMutations()); n < 30 || scenarios["day1"] < 10 || scenarios["day2-scale"] < 10 {
		t.Errorf("%d mutations (%v): want at least 30, and 10 per scenario", n, scenarios)
	}
	for _, f := range []string{
		"outcome", "fixture", "milestones", "errors", "durations",
		"objects/phases", "objects/conditions", "objects/metadata", "objects/properties",
		"objects/links", "objects/replicas", "objects/provisioning", "objects/count",
		"nodes/count", "nodes/ready", "nodes/roles", "nodes/labels", "nodes/taints", "nodes/providerID", "nodes/identity",
		"hosts/state", "hosts/consumer", "hosts/errors", "hosts/bmc",
		"events/warnings", "events/normal",
	} {
		if !families[f] {
			t.Errorf("no mutation regresses an aspect of family %s", f)
		}
	}
}

// aspectFamily is an aspect's name without the role of objects/<role>/x
// and the milestone of durations/<milestone>.
func aspectFamily(aspect string) string {
	parts := strings.Split(aspect, "/")
	switch {
	case parts[0] == "objects" && len(parts) == 3:
		return "objects/" + parts[2]
	case parts[0] == "durations":
		return "durations"
	}
	return aspect
}

// Helpers the mutations share. They find what they change by its role
// and structure, not by the random parts of names, and fail the test when
// the real run has no such thing.

func objectsOf(o *Observation, role string) []*Object {
	var out []*Object
	for i := range o.Objects {
		if o.Objects[i].Role == role {
			out = append(out, &o.Objects[i])
		}
	}
	return out
}

func findObject(t *testing.T, o *Observation, role string, match func(*Object) bool) *Object {
	t.Helper()
	for _, obj := range objectsOf(o, role) {
		if match(obj) {
			return obj
		}
	}
	t.Fatalf("%s %s: no object of role %s like that", o.Scenario, o.Flow, role)
	return nil
}

func live(obj *Object) bool { return obj.DeletedAt == nil }

func deleted(obj *Object) bool { return obj.DeletedAt != nil }

func hasProperty(key, value string) func(*Object) bool {
	return func(obj *Object) bool { return obj.Properties[key] == value }
}

func hasReplicas(obj *Object) bool { return len(obj.Replicas) > 0 }

// workerMachine is a live Machine whose Node is a worker.
func workerMachine(t *testing.T, o *Observation) *Object {
	t.Helper()
	return findObject(t, o, "machine", func(obj *Object) bool {
		n := nodeNamed(o, obj.NodeRef)
		return live(obj) && n != nil && isWorker(n)
	})
}

func isWorker(n *Node) bool {
	_, ok := n.Labels["node-role.kubernetes.io/worker"]
	return ok
}

func nodeNamed(o *Observation, name string) *Node {
	for i := range o.Nodes {
		if o.Nodes[i].Name == name {
			return &o.Nodes[i]
		}
	}
	return nil
}

// workerNode is the Node of workerMachine.
func workerNode(t *testing.T, o *Observation) *Node {
	t.Helper()
	return nodeNamed(o, workerMachine(t, o).NodeRef)
}

func hostNamed(t *testing.T, o *Observation, name string) *Host {
	t.Helper()
	for i := range o.Hosts {
		if o.Hosts[i].Name == name {
			return &o.Hosts[i]
		}
	}
	t.Fatalf("%s %s: no host %s", o.Scenario, o.Flow, name)
	return nil
}

func hostObject(t *testing.T, o *Observation, name string) *Object {
	t.Helper()
	return findObject(t, o, "host", func(obj *Object) bool { return obj.Name == name })
}

// endCondition makes a condition end with the given status and reason,
// seen when the run finished.
func endCondition(o *Observation, obj *Object, typ, status, reason string) {
	obj.Conditions = append(obj.Conditions, ConditionTransition{Type: typ, Status: status, Reason: reason, At: o.FinishedAt})
}

// endReplicas adds a last replica sample.
func endReplicas(o *Observation, obj *Object, desired, ready, available int) {
	obj.Replicas = append(obj.Replicas, ReplicaSample{At: o.FinishedAt, Desired: desired, Ready: ready, Available: available})
}

// fail makes the flow end with outcome and an error of the driver.
func fail(o *Observation, outcome Outcome, msg string) {
	o.Outcome = outcome
	o.Errors = append(o.Errors, Error{Source: "driver", Message: msg, At: o.FinishedAt})
}

// delay makes the flow reach the named milestone, and everything after
// it, later by d.
func delay(t *testing.T, o *Observation, milestone string, d time.Duration) {
	t.Helper()
	i := slices.IndexFunc(o.Milestones, func(m Milestone) bool { return m.Name == milestone })
	if i < 0 {
		t.Fatalf("%s %s: no milestone %s", o.Scenario, o.Flow, milestone)
	}
	for j := i; j < len(o.Milestones); j++ {
		if at := o.Milestones[j].ReachedAt; at != nil {
			later := at.Add(d)
			o.Milestones[j].ReachedAt = &later
		}
	}
	o.FinishedAt = o.FinishedAt.Add(d)
}

func milestone(t *testing.T, o *Observation, name string) *Milestone {
	t.Helper()
	i := slices.IndexFunc(o.Milestones, func(m Milestone) bool { return m.Name == name })
	if i < 0 {
		t.Fatalf("%s %s: no milestone %s", o.Scenario, o.Flow, name)
	}
	return &o.Milestones[i]
}

// dropEvents removes the events of a role and reason, returning how many.
func dropEvents(t *testing.T, o *Observation, role, reason string) {
	t.Helper()
	n := len(o.Events)
	o.Events = slices.DeleteFunc(o.Events, func(e Event) bool { return e.Role == role && e.Reason == reason })
	if len(o.Events) == n {
		t.Fatalf("%s %s: no %s event %s", o.Scenario, o.Flow, role, reason)
	}
}

// recordEvent records an event about obj.
func recordEvent(o *Observation, obj *Object, typ, reason, msg string, at time.Time) {
	o.Events = append(o.Events, Event{
		Role: obj.Role, Object: ObjectRef{APIVersion: obj.APIVersion, Kind: obj.Kind, Namespace: obj.Namespace, Name: obj.Name},
		Type: typ, Reason: reason, Message: msg, Count: 1, At: at,
	})
}

// warning records a Warning event about obj when the run finished.
func warning(o *Observation, obj *Object, reason, msg string) {
	recordEvent(o, obj, "Warning", reason, msg, o.FinishedAt)
}

// fixtureHost returns the hardware the named host reported.
func fixtureHost(t *testing.T, o *Observation, name string) *Hardware {
	t.Helper()
	h := hostNamed(t, o, name)
	if h.Hardware == nil {
		t.Fatalf("%s %s: host %s reported no hardware", o.Scenario, o.Flow, name)
	}
	return h.Hardware
}

// noDrift fails when a helper's target is absent; mutations use it for
// values they read before changing them.
func noDrift(t *testing.T, ok bool, what string) {
	t.Helper()
	if !ok {
		t.Fatalf("the real run has no %s", what)
	}
}
