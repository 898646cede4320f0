package results

import (
	"strings"
	"time"
)

// milestoneAspects is the scenario's milestone plan, in order. Both flows
// must declare the same plan (scenarios declare it once); a different plan
// is a Regression no registry entry can explain, since durations would
// then compare different things.
func milestoneAspects(o *Observation) []Aspect {
	if len(o.Milestones) == 0 {
		return nil
	}
	names := make([]string, 0, len(o.Milestones))
	for _, m := range o.Milestones {
		names = append(names, m.Name)
	}
	return []Aspect{{Name: milestonesAspect, Lines: []string{strings.Join(names, " → ")}}}
}

// durationAspects are durations/total, from the start of the run to the
// last milestone reached, and durations/<milestone> for each milestone
// reached (see Observation.Phases). A milestone only one flow reached is
// an aspect only that flow has: a Regression.
func durationAspects(o *Observation) []Aspect {
	phases := o.Phases()
	if len(phases) == 0 {
		return nil
	}
	as := []Aspect{durationAspect("durations/total", phases[len(phases)-1].End.Sub(o.StartedAt))}
	for _, p := range phases {
		as = append(as, durationAspect("durations/"+p.Name, p.Duration()))
	}
	return as
}

func durationAspect(name string, d time.Duration) Aspect {
	return Aspect{Name: name, Lines: []string{formatDuration(d)}, Duration: &d}
}

// formatDuration rounds d for people: to the second above a minute, to the
// millisecond below.
func formatDuration(d time.Duration) string {
	if d >= time.Minute || d <= -time.Minute {
		return d.Round(time.Second).String()
	}
	return d.Round(time.Millisecond).String()
}
