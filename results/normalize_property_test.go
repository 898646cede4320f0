package results

import (
	"math/rand"
	"reflect"
	"strings"
	"testing"
	"testing/quick"
	"time"
)

var quickConfig = &quick.Config{MaxCount: 300}

// Normalisation must not see names, UIDs, addresses, absolute times or the
// order of unordered lists: rendering the same structure with all of those
// changed gives the same aspects.
func TestAspectsInvariantUnderRenamingUIDsTimesAndOrder(t *testing.T) {
	prop := func(seed, idSeedA, idSeedB int64, shiftSeconds int32) bool {
		baseA := time.Date(2025, 3, 4, 9, 0, 0, 0, time.UTC)
		baseB := baseA.Add(time.Duration(shiftSeconds) * time.Second).In(time.FixedZone("X", 5*3600))
		a := Aspects(genObservation(seed, newIdentities(idSeedA), baseA, false))
		b := Aspects(genObservation(seed, newIdentities(idSeedB), baseB, true))
		if !reflect.DeepEqual(a, b) {
			t.Logf("seed %d: aspects differ:\n%s", seed, aspectDiff(a, b))
			return false
		}
		return true
	}
	if err := quick.Check(prop, quickConfig); err != nil {
		t.Fatal(err)
	}
}

// Normalising a normalised line again changes nothing.
func TestAspectLinesAreFixedPoints(t *testing.T) {
	prop := func(seed, idSeed int64) bool {
		o := genObservation(seed, newIdentities(idSeed), time.Unix(1700000000, 0), false)
		s := newScrubber(o)
		for _, a := range Aspects(o) {
			for _, line := range a.Lines {
				if got := s.scrub(line); got != line {
					t.Logf("%s: scrub(%q) = %q", a.Name, line, got)
					return false
				}
			}
		}
		return true
	}
	if err := quick.Check(prop, quickConfig); err != nil {
		t.Fatal(err)
	}
}

// No name, UID or address of the observation survives into its aspects.
func TestAspectsLeakNoIdentity(t *testing.T) {
	prop := func(seed, idSeed int64) bool {
		ids := newIdentities(idSeed)
		o := genObservation(seed, ids, time.Unix(1700000000, 0), false)
		text := aspectText(Aspects(o))
		for _, v := range ids.names {
			if strings.Contains(text, v) {
				t.Logf("%q leaks into aspects:\n%s", v, text)
				return false
			}
		}
		return true
	}
	if err := quick.Check(prop, quickConfig); err != nil {
		t.Fatal(err)
	}
}

// fragments are the pieces scrub must treat carefully: names, placeholders
// and their words, separators, and things that look like UIDs, times and
// addresses.
var fragments = []string{
	"worker-0", "node", "host", "<", ">", "<node>", "<uid>", ".", "-", "/", " ", ":", "lab", "local", "=",
	"0f5e2a61-8c1e-4a4e-9a37-8f0e3c2d1b00", "2025-03-04T09:00:00Z", "10.1.2.3", "52:54:00:aa:bb:cc",
	"spoke1", "openshift-machine-api", "x7k2p", "a", "1",
	"<rand>", "<infra-id>", "::", "fe80", "2025-03-04 09:00:00 +0000 UTC", "machine-template-hash",
}

type fragmentString string

func (fragmentString) Generate(r *rand.Rand, _ int) reflect.Value {
	var b strings.Builder
	for i := 0; i < r.Intn(12); i++ {
		b.WriteString(fragments[r.Intn(len(fragments))])
	}
	return reflect.ValueOf(fragmentString(b.String()))
}

// scrubberKnowing is a scrubber that knows exactly names, each with its
// placeholder.
func scrubberKnowing(names map[string]string) *scrubber {
	s := emptyScrubber(nil)
	for _, name := range sortedKeys(names) {
		s.add(name, names[name])
	}
	return s
}

func TestScrubIsIdempotent(t *testing.T) {
	s := scrubberKnowing(map[string]string{"worker-0": phNode, "spoke1": phCluster, "openshift-machine-api": phNamespace, "a": phName, "lab": phHost})
	check := func(in string) bool {
		once := s.scrub(in)
		if twice := s.scrub(once); twice != once {
			t.Logf("scrub(%q) = %q, again %q", in, once, twice)
			return false
		}
		return true
	}
	if err := quick.Check(func(f fragmentString) bool { return check(string(f)) }, quickConfig); err != nil {
		t.Fatal(err)
	}
	if err := quick.Check(check, quickConfig); err != nil {
		t.Fatal(err)
	}
}

func TestNormalizeLabelsIsIdempotent(t *testing.T) {
	s := scrubberKnowing(map[string]string{"worker-0": phNode, "spoke1": phCluster, "x7k2p-a": phInfraID})
	prop := func(keys, values []fragmentString) bool {
		m := map[string]string{}
		for i, k := range keys {
			if i < len(values) && !strings.ContainsAny(string(k), "=") {
				m[string(k)] = string(values[i])
			}
		}
		once := normalizeLabels(m, s)
		again := map[string]string{}
		for _, l := range once {
			k, v, _ := strings.Cut(l, "=")
			again[k] = v
		}
		twice := normalizeLabels(again, s)
		if !reflect.DeepEqual(once, twice) && len(once) == len(again) {
			t.Logf("normalizeLabels: %q then %q", once, twice)
			return false
		}
		return true
	}
	if err := quick.Check(prop, quickConfig); err != nil {
		t.Fatal(err)
	}
}

func TestProviderIDSchemeIsIdempotent(t *testing.T) {
	prop := func(scheme, rest fragmentString) bool {
		id := string(scheme) + "://" + string(rest)
		once := providerIDScheme(id)
		return providerIDScheme(once) == once
	}
	if err := quick.Check(prop, quickConfig); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"", "(none)", "no-scheme", "(no scheme)"} {
		if once := providerIDScheme(id); providerIDScheme(once) != once {
			t.Errorf("providerIDScheme(%q) is not a fixed point", once)
		}
	}
}

// The invariance test would pass for a normalisation that throws
// everything away; this one makes sure behaviour still shows.
func TestAspectsSeeBehaviour(t *testing.T) {
	base := time.Unix(1700000000, 0)
	o := genObservation(1, newIdentities(1), base, false)
	before := Aspects(o)
	o.Objects[0].Phases = append(o.Objects[0].Phases, PhaseTransition{Phase: "Failed", At: base.Add(time.Hour)})
	o.Nodes[0].Labels["example.com/extra"] = "yes"
	o.Hosts[0].ProvisioningState = "deprovisioning"
	after := Aspects(o)
	diff := aspectDiff(before, after)
	for _, want := range []string{"/phases", "nodes/labels", "hosts/state"} {
		if !strings.Contains(diff, want) {
			t.Errorf("changing behaviour did not change aspect %s; diff:\n%s", want, diff)
		}
	}
}

func aspectText(as []Aspect) string {
	var b strings.Builder
	for _, a := range as {
		b.WriteString(a.Name + ": " + strings.Join(a.Lines, " | ") + "\n")
	}
	return b.String()
}

func aspectDiff(a, b []Aspect) string {
	am, bm := aspectMap(a), aspectMap(b)
	var out strings.Builder
	for _, name := range unionNames(am, bm) {
		var la, lb []string
		if am[name] != nil {
			la = am[name].Lines
		}
		if bm[name] != nil {
			lb = bm[name].Lines
		}
		if !reflect.DeepEqual(la, lb) {
			out.WriteString(name + ":\n  a: " + strings.Join(la, " | ") + "\n  b: " + strings.Join(lb, " | ") + "\n")
		}
	}
	return out.String()
}
