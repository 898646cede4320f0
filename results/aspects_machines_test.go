package results

import (
	"reflect"
	"strings"
	"testing"
	"time"
)

var t0 = time.Date(2025, 3, 4, 9, 0, 0, 0, time.UTC)

func at(min int) time.Time { return t0.Add(time.Duration(min) * time.Minute) }

func atPtr(min int) *time.Time { t := at(min); return &t }

// aspectLines returns the lines of the named aspect of o, and whether o
// has it.
func aspectLines(t *testing.T, o *Observation, name string) ([]string, bool) {
	t.Helper()
	for _, a := range Aspects(o) {
		if a.Name == name {
			return a.Lines, true
		}
	}
	return nil, false
}

func TestLinksAspect(t *testing.T) {
	o := &Observation{StartedAt: t0,
		Nodes: []Node{{Name: "n-a", ProviderID: "metal3://ns/a/m-a"}, {Name: "n-b", ProviderID: "metal3://ns/b/other"}, {Name: "n-c"}},
		Objects: []Object{
			{Role: "machine", Name: "m-a", ProviderID: "metal3://ns/a/m-a", NodeRef: "n-a"},
			{Role: "machine", Name: "m-b", ProviderID: "metal3://ns/b/m-b", NodeRef: "n-b"},
			{Role: "machine", Name: "m-c", ProviderID: "metal3://ns/c/m-c", NodeRef: "n-c"},
			{Role: "machine", Name: "m-d", ProviderID: "metal3://ns/d/m-d"},
			{Role: "machine", Name: "m-e", ProviderID: "baremetalhost:///ns/e/u", NodeRef: "n-e", DeletedAt: atPtr(9)},
			{Role: "machine", Name: "m-f", ProviderID: "baremetalhost:///ns/f/u", NodeRef: "n-f"},
			{Role: nodeRole, Name: "n-f", ProviderID: "baremetalhost:///ns/f/u", CreatedAt: at(1)},
			{Role: "machine-set", Name: "no-links"},
		}}
	got, _ := aspectLines(t, o, "objects/machine/links")
	want := []string{
		"providerID=baremetalhost:// (deleted)",   // m-e: whose the Node of its name is now is chance
		"providerID=baremetalhost:// node=linked", // m-f, through its node record
		"providerID=metal3:// node=linked",        // m-a
		"providerID=metal3:// node=mismatch",      // m-b
		"providerID=metal3:// node=mismatch",      // m-c: the Node has no providerID
		"providerID=metal3:// node=none",          // m-d
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("links:\n got  %q\n want %q", got, want)
	}
	if _, ok := aspectLines(t, o, "objects/machine-set/links"); ok {
		t.Error("objects without providerID or nodeRef have no links")
	}
}

func TestReplicasAspect(t *testing.T) {
	rs := func(triples ...int) []ReplicaSample {
		var out []ReplicaSample
		for i := 0; i < len(triples); i += 3 {
			out = append(out, ReplicaSample{At: at(i), Desired: triples[i], Ready: triples[i+1], Available: triples[i+2]})
		}
		return out
	}
	for _, tc := range []struct {
		name    string
		samples []ReplicaSample
		deleted bool
		want    string
	}{
		{"levels settle on the last counts seen", rs(0, 0, 0, 2, 0, 0, 2, 1, 0, 2, 2, 2, 1, 1, 1, 3, 2, 2, 3, 3, 3), false, "2: 2/2 → 1: 1/1 → 3: 3/3"},
		{"zero only", rs(0, 0, 0), false, "0: 0/0"},
		{"a set scaled to 0 keeps it", rs(1, 1, 1, 0, 0, 0), true, "1: 1/1 → 0: 0/0 (deleted)"},
		{"never settled shows", rs(2, 0, 0), false, "2: 0/0"},
	} {
		obj := Object{Replicas: tc.samples}
		if tc.deleted {
			obj.DeletedAt = atPtr(60)
		}
		if got := replicaLine(obj); got != tc.want {
			t.Errorf("%s: got %q, want %q", tc.name, got, tc.want)
		}
	}
}

// Provisioning lines say whether an image or user data went to several
// hosts of the role or one, whatever its digest.
func TestProvisioningAspect(t *testing.T) {
	mk := func(img, ud string) Object {
		return Object{Role: "host", Provisioning: []Provisioning{{Image: "discovery-" + img, Format: "live-iso", UserData: ud}}}
	}
	render := func(suffix string) []string {
		o := &Observation{Objects: []Object{
			mk("iso"+suffix, ""), mk("iso"+suffix, ""),
			{Role: "host", Provisioning: []Provisioning{{Image: "rhcos" + suffix, UserData: "sha256:a" + suffix}, {Image: "rhcos" + suffix, Format: "raw", UserData: "sha256:b" + suffix}}},
			mk("own"+suffix, "unreadable: forbidden"),
		}}
		lines, _ := aspectLines(t, o, "objects/host/provisioning")
		return lines
	}
	want := []string{
		"format=live-iso image=own userData=unreadable",
		"format=live-iso image=shared userData=none",
		"format=live-iso image=shared userData=none",
		"format=none image=shared userData=own",
		"format=raw image=shared userData=own",
	}
	if got := render("1"); !reflect.DeepEqual(got, want) {
		t.Errorf("provisioning:\n got  %q\n want %q", got, want)
	}
	if a, b := render("1"), render("2"); !reflect.DeepEqual(a, b) {
		t.Errorf("other digests, other lines: %q vs %q", a, b)
	}
}

// Interchangeable objects count as transitions: which pool host went
// where is random, what the pool did is not.
func TestInterchangeablePhasesAreTransitions(t *testing.T) {
	host := func(pool bool, phases ...string) Object {
		obj := Object{Role: "host", Interchangeable: pool}
		for i, p := range phases {
			obj.Phases = append(obj.Phases, PhaseTransition{Phase: p, At: at(i)})
		}
		return obj
	}
	a := &Observation{Objects: []Object{
		host(true, "available", "provisioning", "provisioned"), host(true, "available"),
		host(true, "available", "provisioning", "provisioning", "provisioned", "deprovisioning", "available"),
		host(false, "registering", "available"),
	}}
	b := &Observation{Objects: []Object{a.Objects[2], a.Objects[1], a.Objects[3], a.Objects[0]}}
	got, _ := aspectLines(t, a, "objects/host/phases")
	want := []string{
		"available → provisioning", "available → provisioning", "deprovisioning → available",
		"provisioned → deprovisioning", "provisioning → provisioned", "provisioning → provisioned", "registering → available",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("phases:\n got  %q\n want %q", got, want)
	}
	if other, _ := aspectLines(t, b, "objects/host/phases"); !reflect.DeepEqual(other, got) {
		t.Errorf("another pick of the pool gave %q", other)
	}
	if strings.Contains(strings.Join(got, "|"), "available → provisioning → provisioned") {
		t.Error("interchangeable objects must not keep their own sequence")
	}
}
