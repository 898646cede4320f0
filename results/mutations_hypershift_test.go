package results

import (
	"slices"
	"strings"
	"testing"
)

// Mutations of a HyperShift private-types pair (hostedPair: the real
// run's CAPI day1 observation on both sides, which is parity). Each of
// day1's mutations of the CAPI flow, applied to the private types' side,
// must be a Regression in exactly the aspects it regresses against MAPI,
// and those in alsoRegressed: the registry's MAPI/CAPI entries explain
// nothing between two CAPI sides.
func TestHyperShiftPrivateSideMutationsFail(t *testing.T) {
	// Against MAPI, nodes/annotations differs anyway and
	// node-machine-annotations explains it with or without the missing or
	// extra Node; that entry is scoped to the MAPI/CAPI scenarios, so
	// between two CAPI sides the Node's cluster.x-k8s.io annotations,
	// lines of one side alone, are a regression.
	alsoRegressed := map[string][]string{"capi-node-missing": {"nodes/annotations"}, "capi-extra-node": {"nodes/annotations"}}
	reg, base := builtIn(t), hostedPair(t, ScenarioHyperShiftPrivateTypes)
	s := mustCompare(t, base, reg, DefaultOptions())
	if s.Failed() || s.Count(Parity) != len(s.Aspects) || len(s.Aspects) < 30 {
		t.Fatalf("identical sides must be parity in every aspect: %d of %d parity, regressions %v", s.Count(Parity), len(s.Aspects), regressions(s))
	}
	n := 0
	for _, mu := range day1Mutations() {
		if !strings.HasPrefix(mu.name, "capi-") {
			continue
		}
		n++
		t.Run(mu.name, func(t *testing.T) {
			p := Pair{Scenario: base.Scenario, A: deepCopy(t, base.A), B: deepCopy(t, base.B)}
			mu.mutate(t, p.A, p.B)
			if err := p.B.Validate(); err != nil {
				t.Fatalf("the mutated capi-private observation is not one a driver could write: %v", err)
			}
			s := mustCompare(t, p, reg, DefaultOptions())
			want := sorted(append(slices.Clone(mu.regressed), alsoRegressed[mu.name]...))
			if got := regressions(s); !slices.Equal(got, want) {
				t.Errorf("regressions %v, want %v\n%s", got, want, verdictsOf(s, want))
			}
		})
	}
	if n < 10 {
		t.Errorf("%d mutations of the CAPI side, want at least 10", n)
	}
}
