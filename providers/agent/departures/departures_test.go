package departures

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// Every departure is complete, named once, and its OursRef names a Go
// declaration that exists: a reference that rotted would send a reader to
// nothing.
func TestDeparturesComplete(t *testing.T) {
	seen := map[string]bool{}
	for _, d := range Departures {
		if d.ID == "" || d.Upstream == "" || d.UpstreamRef == "" || d.Ours == "" || d.OursRef == "" || d.ShowsIn == "" {
			t.Errorf("departure %+v: every field is required", d)
		}
		if seen[d.ID] {
			t.Errorf("departure %s registered twice", d.ID)
		}
		seen[d.ID] = true
		file, symbol, ok := strings.Cut(d.OursRef, " ")
		if !ok {
			t.Errorf("departure %s: OursRef %q is not \"<path> <symbol>\"", d.ID, d.OursRef)
			continue
		}
		src, err := os.ReadFile(filepath.Join("..", "..", "..", file))
		if err != nil {
			t.Errorf("departure %s: %v", d.ID, err)
			continue
		}
		if !declaration(symbol).Match(src) {
			t.Errorf("departure %s: %s declares no %s", d.ID, file, symbol)
		}
	}
	if got := IDs(); len(got) != len(Departures) || got[0] != Departures[0].ID {
		t.Errorf("IDs() = %v, want every ID in report order", got)
	}
}

// declaration matches the declaration of a function, a method
// (Type.Method), a type or a variable in a Go file.
func declaration(symbol string) *regexp.Regexp {
	if recv, method, ok := strings.Cut(symbol, "."); ok {
		return regexp.MustCompile(`(?m)^func \(\w+ \*?` + recv + `\) ` + method + `\(`)
	}
	return regexp.MustCompile(`(?m)^(func ` + symbol + `\(|type ` + symbol + ` |\s*` + symbol + `\s+=)`)
}
