package results

import (
	"strings"
	"time"
)

// Run metadata: what a reader needs to judge a verdict (when, which
// commit, which versions, which hardware, KVM or TCG, which machine), read
// from the observations' Environment, Fixture, Hosts and Backends only.
// A fact the observations disagree on is shown with every value and where
// it came from, never reduced to one of them.

// factValue is one value of a fact and the observations that recorded it;
// Where is empty when every observation agrees.
type factValue struct {
	Value, Where string
}

// factRow is one fact of the whole run.
type factRow struct {
	Name   string
	Values []factValue
}

// pairFact is one fact of a scenario's two flows (MAPI is side A's value,
// CAPI side B's); Same merges the cells.
type pairFact struct {
	Name, MAPI, CAPI string
	Same             bool
}

// factSource names a fact and reads it from one observation ("" when the
// observation did not record it).
type factSource struct {
	name string
	read func(o *Observation) string
}

// Environment keys the lab writes (framework.Lab.Environment); they are
// shown under their own names, the lab machine's in one line. Any other
// key is shown as it is.
var (
	envCommit        = "paritylab-commit"
	envAccel         = "accel"
	envMachineKeys   = []string{"machine-cpu", "machine-cpus", "machine-memory"}
	envNamedKeys     = []string{envCommit, envAccel, "machine-cpu", "machine-cpus", "machine-memory", "kernel", "go"}
	versionTitles    = map[string]string{"openshift": "OpenShift", "kubernetes": "Kubernetes"}
	versionFirstKeys = []string{"openshift", "kubernetes"}
)

// factSources lists the facts the observations recorded, in reading order:
// run, commit, versions, hardware, accelerator, lab machine, other
// environment keys.
func factSources(obs []*Observation) []factSource {
	src := []factSource{
		{"run ID", func(o *Observation) string { return o.RunID }},
		{"paritylab commit", envReader(envCommit)},
	}
	for _, k := range versionKeys(obs) {
		src = append(src, factSource{"version " + titleOr(versionTitles, k), func(o *Observation) string { return o.Fixture.Versions[k] }})
	}
	src = append(src,
		factSource{"host hardware", hostHardwareSummary},
		factSource{"accelerator (KVM or TCG)", accelOf},
		factSource{"lab machine", labMachine},
		factSource{"kernel", envReader("kernel")},
		factSource{"go", envReader("go")},
	)
	named := map[string]bool{}
	for _, k := range envNamedKeys {
		named[k] = true
	}
	other := map[string]bool{}
	for _, o := range obs {
		for k := range o.Environment {
			if !named[k] {
				other[k] = true
			}
		}
	}
	for _, k := range sortedKeys(other) {
		src = append(src, factSource{k, envReader(k)})
	}
	return src
}

func envReader(key string) func(*Observation) string {
	return func(o *Observation) string { return o.Environment[key] }
}

// versionKeys are the products any observation reports a version of,
// OpenShift and Kubernetes first.
func versionKeys(obs []*Observation) []string {
	set := map[string]bool{}
	for _, o := range obs {
		for k := range o.Fixture.Versions {
			set[k] = true
		}
	}
	var keys []string
	for _, k := range versionFirstKeys {
		if set[k] {
			keys = append(keys, k)
			delete(set, k)
		}
	}
	return append(keys, sortedKeys(set)...)
}

func titleOr(titles map[string]string, key string) string {
	if t, ok := titles[key]; ok {
		return t
	}
	return key
}

// accelOf is the hypervisor accelerator the hosts ran with: the run
// environment's, else the one recorded among the backends.
func accelOf(o *Observation) string {
	v := o.Environment[envAccel]
	if v == "" {
		v = o.Backends[envAccel]
	}
	switch strings.ToLower(v) {
	case "kvm", "tcg":
		return strings.ToUpper(v)
	}
	return v
}

// labMachine is the lab machine's CPU model, CPU count and memory.
func labMachine(o *Observation) string {
	var parts []string
	for _, k := range envMachineKeys {
		v := o.Environment[k]
		if v == "" {
			continue
		}
		if k == "machine-cpus" {
			v += " CPUs"
		}
		parts = append(parts, v)
	}
	return strings.Join(parts, ", ")
}

// runFacts are the facts of the whole run: when it ran, then every fact
// any observation recorded, with each differing value and where it came
// from.
func runFacts(scenarios []ScenarioResult) []factRow {
	type labelled struct {
		label flowLabel
		o     *Observation
	}
	var obs []labelled
	var all []*Observation
	for _, s := range scenarios {
		sides := s.Sides()
		for _, f := range sides.Flows() {
			if o := s.Observation(f); o != nil {
				obs = append(obs, labelled{flowLabel{s.Scenario, sides.Title(f)}, o})
				all = append(all, o)
			}
		}
	}
	var out []factRow
	if span := runSpan(all); span != "" {
		out = append(out, factRow{Name: "date and time (UTC)", Values: []factValue{{Value: span}}})
	}
	for _, src := range factSources(all) {
		var order []string
		where := map[string][]flowLabel{}
		recorded := false
		for _, l := range obs {
			v := src.read(l.o)
			recorded = recorded || v != ""
			v = orWord(v, "(not recorded)")
			if _, seen := where[v]; !seen {
				order = append(order, v)
			}
			where[v] = append(where[v], l.label)
		}
		if !recorded {
			continue
		}
		row := factRow{Name: src.name}
		for _, v := range order {
			fv := factValue{Value: v}
			if len(order) > 1 {
				fv.Where = strings.Join(mergeFlows(where[v]), ", ")
			}
			row.Values = append(row.Values, fv)
		}
		out = append(out, row)
	}
	return out
}

// flowLabel names one flow of a scenario by its title: "day1 MAPI".
type flowLabel struct{ scenario, title string }

func (l flowLabel) String() string { return l.scenario + " " + l.title }

// mergeFlows names a scenario once when both its flows are listed, side A
// then side B as runFacts lists them: "day1 MAPI, day1 CAPI" becomes
// "day1".
func mergeFlows(labels []flowLabel) []string {
	var out []string
	for i := 0; i < len(labels); i++ {
		if i+1 < len(labels) && labels[i+1].scenario == labels[i].scenario {
			out = append(out, labels[i].scenario)
			i++
			continue
		}
		out = append(out, labels[i].String())
	}
	return out
}

// runSpan is from the earliest start to the latest finish, in UTC.
func runSpan(obs []*Observation) string {
	var first, last time.Time
	for _, o := range obs {
		if !o.StartedAt.IsZero() && (first.IsZero() || o.StartedAt.Before(first)) {
			first = o.StartedAt
		}
		if o.FinishedAt.After(last) {
			last = o.FinishedAt
		}
	}
	if first.IsZero() {
		return ""
	}
	if last.IsZero() {
		return utcTime(first)
	}
	return utcTime(first) + " → " + utcTime(last)
}

func utcTime(t time.Time) string { return t.UTC().Format("2006-01-02 15:04:05") }

// pairFacts are the facts of one scenario, flow by flow: when each flow
// ran, how it ended, then every fact either recorded.
func pairFacts(s ScenarioResult) []pairFact {
	m, c := s.A, s.B
	facts := []factSource{
		{"started (UTC)", func(o *Observation) string { return utcTime(o.StartedAt) }},
		{"run time", func(o *Observation) string { return formatDuration(o.FinishedAt.Sub(o.StartedAt)) }},
		{"outcome", func(o *Observation) string { return string(o.Outcome) }},
		{"fixture", func(o *Observation) string { return o.Fixture.Name }},
	}
	var present []*Observation
	for _, o := range []*Observation{m, c} {
		if o != nil {
			present = append(present, o)
		}
	}
	var out []pairFact
	for _, src := range append(facts, factSources(present)...) {
		mv, cv := readFact(src, m), readFact(src, c)
		if mv == "" && cv == "" {
			continue
		}
		out = append(out, pairFact{Name: src.name, MAPI: orWord(mv, "(not recorded)"), CAPI: orWord(cv, "(not recorded)"), Same: mv == cv})
	}
	return out
}

func readFact(src factSource, o *Observation) string {
	if o == nil {
		return ""
	}
	return src.read(o)
}
