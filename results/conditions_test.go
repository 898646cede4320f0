package results

import "testing"

func TestConditionLineKeepsEachTypesPathToItsFinalStatus(t *testing.T) {
	tr := func(pairs ...string) []ConditionTransition {
		var out []ConditionTransition
		for i := 0; i < len(pairs); i += 2 {
			out = append(out, ConditionTransition{Type: pairs[i], Status: pairs[i+1]})
		}
		return out
	}
	for _, tc := range []struct {
		name string
		in   []ConditionTransition
		want string
	}{
		{"interleaving of types does not matter",
			tr("Validated", "False", "Connected", "False", "Connected", "True", "Validated", "True"),
			"Connected=False, Connected=True, Validated=False, Validated=True"},
		{"a detour back to an earlier status is dropped",
			tr("Validated", "False", "Validated", "True", "Validated", "False", "Validated", "True"),
			"Validated=False, Validated=True"},
		{"ending worse than it started is kept",
			tr("Ready", "True", "Ready", "False"),
			"Ready=True, Ready=False"},
		{"a detour that ends elsewhere keeps the way there",
			tr("Ready", "Unknown", "Ready", "True", "Ready", "Unknown", "Ready", "False"),
			"Ready=Unknown, Ready=False"},
	} {
		if got := conditionLine(tc.in); got != tc.want {
			t.Errorf("%s: got %q, want %q", tc.name, got, tc.want)
		}
	}
}
