package specdiff

import (
	"encoding/json"
	"fmt"
	"reflect"
	"sort"
)

// Changed returns the JSON paths (dot-separated, below the spec) of the
// leaves that differ between old and new, sorted. Lists count as leaves.
func Changed(old, new any) ([]string, error) {
	a, err := toMap(old)
	if err != nil {
		return nil, err
	}
	b, err := toMap(new)
	if err != nil {
		return nil, err
	}
	var out []string
	diff("", a, b, &out)
	sort.Strings(out)
	return out, nil
}

func toMap(v any) (map[string]any, error) {
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("encode spec: %w", err)
	}
	m := map[string]any{}
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, fmt.Errorf("decode spec: %w", err)
	}
	return m, nil
}

func diff(prefix string, a, b map[string]any, out *[]string) {
	keys := map[string]bool{}
	for k := range a {
		keys[k] = true
	}
	for k := range b {
		keys[k] = true
	}
	for k := range keys {
		p := k
		if prefix != "" {
			p = prefix + "." + k
		}
		am, aok := a[k].(map[string]any)
		bm, bok := b[k].(map[string]any)
		switch {
		case aok && bok:
			diff(p, am, bm, out)
		case !reflect.DeepEqual(a[k], b[k]):
			*out = append(*out, p)
		}
	}
}
