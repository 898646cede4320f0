package apiproxy

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
)

// Body translates a JSON body (an object, a List, a discovery document, a
// watch event) in a direction. An empty body passes through.
func Body(raw []byte, d Direction) ([]byte, error) {
	if len(bytes.TrimSpace(raw)) == 0 {
		return raw, nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber() // numbers stay as they were written
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("translate body: %w", err)
	}
	if m, ok := v.(map[string]any); ok && d == ToStandard {
		discovery(m)
	}
	walk(v, d)
	out, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("translate body: %w", err)
	}
	return out, nil
}

// walk translates, everywhere in a decoded document, the fields that name
// a group: apiVersion (objects, List items, owner references, managed
// fields, embedded type metadata), apiGroup (v1beta2 references), a
// ConversionReview's desiredAPIVersion (the conversion shim), and
// a CustomResourceDefinition's group and name. Keys, labels included, and
// kind are left alone.
func walk(v any, d Direction) {
	switch t := v.(type) {
	case map[string]any:
		for k, val := range t {
			s, isString := val.(string)
			switch {
			case (k == "apiVersion" || k == "desiredAPIVersion") && isString:
				t[k], _ = apiVersion(s, d)
			case k == "apiGroup" && isString:
				t[k], _ = group(s, d)
			default:
				walk(val, d)
			}
		}
		crd(t, d)
	case []any:
		for _, e := range t {
			walk(e, d)
		}
	}
}

// crd translates a CustomResourceDefinition's spec.group and its name,
// <plural>.<group>: CAPI reads its CRDs (the contract labels).
func crd(m map[string]any, d Direction) {
	if m["kind"] != "CustomResourceDefinition" {
		return
	}
	if spec, ok := m["spec"].(map[string]any); ok {
		if g, ok := spec["group"].(string); ok {
			spec["group"], _ = group(g, d)
		}
	}
	if meta, ok := m["metadata"].(map[string]any); ok {
		if name, ok := meta["name"].(string); ok {
			meta["name"] = crdName(name, d)
		}
	}
}

// JSONPatch translates a JSON patch (RFC 6902): its values as any body,
// and a value that is a bare group or group/version where the operation's
// path ends in apiGroup or apiVersion, which walk cannot tell from any
// other string.
func JSONPatch(raw []byte, d Direction) ([]byte, error) {
	raw, err := Body(raw, d)
	if err != nil || len(bytes.TrimSpace(raw)) == 0 {
		return raw, err
	}
	var ops []map[string]any
	if err := json.Unmarshal(raw, &ops); err != nil {
		return nil, fmt.Errorf("translate JSON patch: %w", err)
	}
	for _, op := range ops {
		p, _ := op["path"].(string)
		v, isString := op["value"].(string)
		if !isString {
			continue
		}
		switch p[strings.LastIndex(p, "/")+1:] {
		case "apiVersion":
			op["value"], _ = apiVersion(v, d)
		case "apiGroup":
			op["value"], _ = group(v, d)
		}
	}
	return json.Marshal(ops)
}
