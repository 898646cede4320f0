package results

import (
	"strings"
	"testing"
	"time"
)

// A timeline lists what happened to an object in time order relative to
// the flow's start, shows digests only truncated, and merges a host's BMC
// operations and final state into its BareMetalHost object.
func TestObjectTimelines(t *testing.T) {
	start := time.Date(2025, 3, 5, 8, 0, 0, 0, time.UTC)
	at := func(s int) time.Time { return start.Add(time.Duration(s) * time.Second) }
	gone := at(300)
	digest := "sha256:" + strings.Repeat("ab", 32)
	o := &Observation{Flow: FlowCAPI, StartedAt: start,
		Objects: []Object{
			{Role: "host", Kind: "BareMetalHost", Namespace: "ns", Name: "w0", CreatedAt: at(-60),
				Phases:       []PhaseTransition{{Phase: "provisioned", At: at(200)}},
				Provisioning: []Provisioning{{At: at(60), Image: digest, Format: "raw", UserData: digest}}},
			{Kind: "MachineDeployment", Namespace: "ns", Name: "md", CreatedAt: at(0), DeletedAt: &gone,
				Replicas:   []ReplicaSample{{At: at(10), Desired: 1}},
				Conditions: []ConditionTransition{{Type: "Ready", Status: "False", Reason: "ScalingUp", Message: "1 replica", At: at(11)}}},
		},
		Hosts:  []Host{{Namespace: "ns", Name: "w0", ProvisioningState: "provisioned", BMC: []BMCOperation{{At: at(70), Operation: "power:On"}}}},
		Events: []Event{{Object: ObjectRef{Kind: "Secret", Namespace: "ns", Name: "s"}, Type: "Warning", Reason: "Gone", Count: 2, At: at(5)}},
	}
	fo := objectTimelines(o, "o-x--capi")
	if len(fo.Objects) != 2 {
		t.Fatalf("want the host object (with its host record merged) and the MachineDeployment, got %+v", fo.Objects)
	}
	host, md := fo.Objects[0], fo.Objects[1]
	want := []string{
		"-1m0s created",
		"+1m0s provisioning image sha256:abababababab… format=raw userData=sha256:abababababab…",
		"+1m10s BMC power:On",
		"+3m20s phase provisioned",
	}
	if got := entryTexts(host.Entries); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("host timeline:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if len(host.Final) == 0 || !strings.HasPrefix(host.Final[0], "host provisioned") {
		t.Errorf("host final state: %v", host.Final)
	}
	want = []string{"+0s created", "+10s replicas desired=1 ready=0 available=0", "+11s condition Ready=False ScalingUp", "+5m0s deleted"}
	if got := entryTexts(md.Entries); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("role-less object timeline:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if md.Compared != "no role: shown, not diffed" || md.Entries[2].Detail != "1 replica" {
		t.Errorf("role-less object: %+v", md)
	}
	if len(fo.Events) != 1 || fo.Events[0].What != "event Warning Gone (×2) (last seen) on Secret ns/s" {
		t.Errorf("events about objects not recorded: %+v", fo.Events)
	}
}

func entryTexts(es []timelineEntry) []string {
	out := make([]string, 0, len(es))
	for _, e := range es {
		out = append(out, e.At+" "+e.What)
	}
	return out
}

// Every milestone and the total get a row with both durations, their
// delta and ratio, also within tolerance; a milestone one flow did not
// reach says so.
func TestMilestoneRows(t *testing.T) {
	m := readObservation(t, "testdata/acceptance/scale-sample.mapi.json")
	c := readObservation(t, "testdata/acceptance/scale-sample.capi.json")
	c.Milestones[1].ReachedAt = nil
	rows := milestoneRows(mustCompare(t, Pair{Scenario: m.Scenario, A: m, B: c}, nil, DefaultOptions()))
	var got []string
	for _, r := range rows {
		got = append(got, strings.Join([]string{r.Name, r.MAPI, r.CAPI, r.Delta, r.Ratio, string(r.Verdict)}, " "))
	}
	want := []string{
		"scale-up 4m0s 4m22s +22s 1.09× Parity",
		"settle 1m0s not reached   Regression",
		"total 5m0s 4m22s -38s 0.87× Parity",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("milestone rows:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if !rows[1].Outside || rows[0].Outside || rows[0].Description != "end of scale-up" {
		t.Errorf("rows: %+v", rows)
	}
}
