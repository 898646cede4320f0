package results

import (
	"fmt"
	"time"
)

// Timing stays visible within tolerance: the milestone table shows every
// milestone's duration in both flows, their delta and ratio, and the
// verdict of its duration aspect, so a slowdown that is still parity is
// seen before it becomes a regression.

// milestoneRow is one milestone (or the total) of a scenario; MAPI and
// CAPI are side A's and side B's durations.
type milestoneRow struct {
	Name, Description string
	Anchor            string
	MAPI, CAPI        string
	Delta, Ratio      string
	Verdict           Verdict
	Outside           bool
}

const (
	totalMilestone    = "total"
	totalDescription  = "from the start of the run to the last milestone reached"
	notReached        = "not reached"
	durationAspectPre = "durations/"
)

// milestoneRows lists the scenario's milestones, side A's plan first,
// then the total.
func milestoneRows(s ScenarioResult) []milestoneRow {
	names, descs := milestonePlan(s.Sides(), s.A, s.B)
	if len(names) == 0 {
		return nil
	}
	out := make([]milestoneRow, 0, len(names)+1)
	for _, n := range names {
		out = append(out, durationRow(s, n, descs[n]))
	}
	return append(out, durationRow(s, totalMilestone, totalDescription))
}

// milestonePlan is the union of both flows' milestones in declaration
// order, each with its description; descriptions that differ between the
// flows are both given.
func milestonePlan(sides Sides, m, c *Observation) ([]string, map[string]string) {
	var names []string
	descs := map[string]string{}
	byFlow := map[string][2]string{}
	for i, o := range []*Observation{m, c} {
		if o == nil {
			continue
		}
		for _, ms := range o.Milestones {
			d, seen := byFlow[ms.Name]
			if !seen {
				names = append(names, ms.Name)
			}
			d[i] = ms.Description
			byFlow[ms.Name] = d
		}
	}
	for _, n := range names {
		d := byFlow[n]
		switch {
		case d[0] == "" || d[0] == d[1]:
			descs[n] = d[1]
		case d[1] == "":
			descs[n] = d[0]
		default:
			descs[n] = fmt.Sprintf("%s: %s; %s: %s", sides.TitleA, d[0], sides.TitleB, d[1])
		}
	}
	return names, descs
}

func durationRow(s ScenarioResult, name, desc string) milestoneRow {
	r := milestoneRow{Name: name, Description: desc, MAPI: notReached, CAPI: notReached}
	a, ok := s.Aspect(durationAspectPre + name)
	if !ok {
		return r
	}
	r.Anchor, r.Verdict, r.Outside = anchor("d", s.Scenario, a.Aspect), a.Verdict, a.Verdict != Parity
	r.MAPI, r.CAPI = durationOrAbsent(a.MAPIDuration), durationOrAbsent(a.CAPIDuration)
	if a.MAPIDuration != nil && a.CAPIDuration != nil {
		m, c := *a.MAPIDuration, *a.CAPIDuration
		r.Delta = signedDuration(c - m)
		if m > 0 {
			r.Ratio = fmt.Sprintf("%.2f×", float64(c)/float64(m))
		}
	}
	return r
}

func durationOrAbsent(d *time.Duration) string {
	if d == nil {
		return notReached
	}
	return formatDuration(*d)
}
