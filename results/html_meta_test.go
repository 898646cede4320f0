package results

import (
	"reflect"
	"testing"
	"time"
)

func hw(cpus, mem int, disks ...int) *Hardware {
	h := &Hardware{Arch: "x86_64", CPUs: cpus, MemoryMiB: mem, NICs: []NIC{{Name: "enp1s0"}}}
	for _, d := range disks {
		h.Disks = append(h.Disks, Disk{Name: "sda", SizeGiB: d})
	}
	return h
}

func TestHostHardwareSummary(t *testing.T) {
	ten := &Observation{}
	for range 10 {
		ten.Hosts = append(ten.Hosts, Host{Hardware: hw(4, 16384, 120)})
	}
	mixed := &Observation{Hosts: []Host{{Hardware: hw(4, 8192, 120, 40)}, {Hardware: hw(4, 16384, 120)}, {Hardware: hw(4, 16384, 120)}, {}}}
	declared := &Observation{Fixture: Fixture{Hosts: []FixtureHost{{Name: "w", Hardware: *hw(1, 2048)}}}, Hosts: []Host{{}}}
	for name, tc := range map[string]struct {
		o    *Observation
		want string
	}{
		"ten alike": {ten, "10 hosts: x86_64, 4 CPUs, 16384 MiB, 1 disk 120 GiB, 1 NIC"},
		"mixed": {mixed, "2 hosts: x86_64, 4 CPUs, 16384 MiB, 1 disk 120 GiB, 1 NIC; " +
			"1 host: x86_64, 4 CPUs, 8192 MiB, 2 disks 120 GiB + 40 GiB, 1 NIC; 1 host: no hardware reported"},
		"declared only": {declared, "1 host: x86_64, 1 CPU, 2048 MiB, no disk, 1 NIC (declared by the fixture; no host reported hardware)"},
		"nothing":       {&Observation{}, ""},
	} {
		if got := hostHardwareSummary(tc.o); got != tc.want {
			t.Errorf("%s:\n got  %q\n want %q", name, got, tc.want)
		}
	}
}

// A fact both flows agree on is shown once; one they disagree on is shown
// with each value and where it came from; a fact nobody recorded is left
// out; the accelerator falls back to the backends.
func TestRunFacts(t *testing.T) {
	start := time.Date(2025, 3, 4, 9, 0, 0, 0, time.FixedZone("CET", 3600))
	obs := func(f Flow, accel string) *Observation {
		return &Observation{Scenario: "s", Flow: f, StartedAt: start, FinishedAt: start.Add(time.Hour),
			Environment: map[string]string{"paritylab-commit": "abc", "accel": accel},
			Fixture:     Fixture{Versions: map[string]string{"openshift": "4.17.3"}}}
	}
	m, c := obs(FlowMAPI, "kvm"), obs(FlowCAPI, "")
	c.Backends = map[string]string{"accel": "tcg"}
	facts := runFacts([]ScenarioResult{{Scenario: "s", A: m, B: c}})
	got := map[string][]factValue{}
	var names []string
	for _, f := range facts {
		got[f.Name] = f.Values
		names = append(names, f.Name)
	}
	want := []string{"date and time (UTC)", "paritylab commit", "version OpenShift", "accelerator (KVM or TCG)"}
	if !reflect.DeepEqual(names, want) {
		t.Fatalf("facts %v, want %v", names, want)
	}
	if v := got["date and time (UTC)"]; v[0].Value != "2025-03-04 08:00:00 → 2025-03-04 09:00:00" {
		t.Errorf("run time not in UTC: %v", v)
	}
	if v := got["paritylab commit"]; len(v) != 1 || v[0] != (factValue{Value: "abc"}) {
		t.Errorf("agreed fact: %v", v)
	}
	if v := got["accelerator (KVM or TCG)"]; !reflect.DeepEqual(v, []factValue{{"KVM", "s MAPI"}, {"TCG", "s CAPI"}}) {
		t.Errorf("disagreeing fact: %v", v)
	}
	pf := pairFacts(ScenarioResult{Scenario: "s", A: m, B: c})
	for _, f := range pf {
		if f.Name == "accelerator (KVM or TCG)" && (f.Same || f.MAPI != "KVM" || f.CAPI != "TCG") {
			t.Errorf("pair fact: %+v", f)
		}
	}
}

func TestMergeFlows(t *testing.T) {
	got := mergeFlows([]flowLabel{{"a", "MAPI"}, {"a", "CAPI"}, {"b", "MAPI"}, {"c", "CAPI"}})
	if want := []string{"a", "b MAPI", "c CAPI"}; !reflect.DeepEqual(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
}
