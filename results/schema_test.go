package results

import (
	"bytes"
	"encoding/json"
	"flag"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

var update = flag.Bool("update", false, "rewrite golden files and the generated JSON Schema")

const schemaFile = "observation.schema.json"

// The committed JSON Schema is what the Go types say.
func TestObservationSchemaIsGenerated(t *testing.T) {
	want := generateSchema(t)
	if *update {
		if err := os.WriteFile(schemaFile, want, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	got, err := os.ReadFile(schemaFile)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("%s is stale: run go test ./results -run TestObservationSchema -update", schemaFile)
	}
	if !bytes.Equal(ObservationJSONSchema(), got) {
		t.Fatal("embedded schema differs from the file")
	}
}

// Real examples, and what Encode writes, pass the schema; broken ones fail
// it, as they fail Decode.
func TestObservationSchemaValidatesExamples(t *testing.T) {
	schema := compileSchema(t)
	files, _ := filepath.Glob("testdata/*/*.json")
	if len(files) < 4 {
		t.Fatalf("want example observations under testdata, found %v", files)
	}
	for _, f := range files {
		if err := schema.Validate(readJSON(t, f)); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
	for seed := int64(0); seed < 20; seed++ {
		var buf bytes.Buffer
		if err := Encode(&buf, genObservation(seed, newIdentities(seed), time.Unix(1700000000, 0), false)); err != nil {
			t.Fatal(err)
		}
		if err := schema.Validate(decodeJSON(t, buf.Bytes())); err != nil {
			t.Errorf("generated observation %d: %v", seed, err)
		}
	}
}

func TestObservationSchemaRejectsBrokenDocuments(t *testing.T) {
	schema := compileSchema(t)
	for name, mutate := range brokenObservations() {
		t.Run(name, func(t *testing.T) {
			doc := readJSON(t, "testdata/acceptance/scale-sample.mapi.json").(map[string]any)
			mutate(doc)
			if err := schema.Validate(doc); err == nil {
				t.Error("schema accepted it")
			}
			data, _ := json.Marshal(doc)
			if _, err := Decode(bytes.NewReader(data)); err == nil {
				t.Error("Decode accepted it")
			}
		})
	}
}

func brokenObservations() map[string]func(map[string]any) {
	return map[string]func(map[string]any){
		"unknown schema version": func(d map[string]any) { d["schemaVersion"] = "paritylab.io/observation/v9" },
		"bad flow":               func(d map[string]any) { d["flow"] = "xapi" },
		"bad outcome":            func(d map[string]any) { d["outcome"] = "maybe" },
		"unknown field":          func(d map[string]any) { d["color"] = "blue" },
		"unknown nested field":   func(d map[string]any) { d["nodes"].([]any)[0].(map[string]any)["colour"] = "x" },
		"no backends":            func(d map[string]any) { delete(d, "backends") },
		"bad scenario":           func(d map[string]any) { d["scenario"] = "Day 1" },
		"bad time":               func(d map[string]any) { d["startedAt"] = "yesterday" },
	}
}

func compileSchema(t *testing.T) *jsonschema.Schema {
	t.Helper()
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	if err := c.AddResource("observation.schema.json", decodeJSON(t, ObservationJSONSchema())); err != nil {
		t.Fatal(err)
	}
	s, err := c.Compile("observation.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func readJSON(t *testing.T, file string) any {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	return decodeJSON(t, data)
}

func decodeJSON(t *testing.T, data []byte) any {
	t.Helper()
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// generateSchema builds the JSON Schema from the Observation types: field
// docs from observation.go become descriptions, fields without omitempty
// are required, and unknown fields are rejected as Decode rejects them.
func generateSchema(t *testing.T) []byte {
	t.Helper()
	g := &schemaGen{docs: fieldDocs(t, "observation.go"), defs: map[string]any{}}
	root := g.structSchema(reflect.TypeOf(Observation{}))
	root["$schema"] = "https://json-schema.org/draft/2020-12/schema"
	root["$id"] = "https://paritylab.io/schemas/observation/v1.json"
	root["title"] = "paritylab Observation " + SchemaVersion
	root["description"] = "What one flow of a paired parity scenario (MAPI or CAPI, or another pair of flows the scenario compares) did, tagged with the backends that produced it."
	root["$defs"] = g.defs
	data, err := json.MarshalIndent(root, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return append(data, '\n')
}

type schemaGen struct {
	docs map[string]string // "Type.Field" -> doc
	defs map[string]any
}

var timeType = reflect.TypeOf(time.Time{})

// Constraints beyond the Go types, mirrored from Validate.
var fieldConstraints = map[string]map[string]any{
	"Observation.SchemaVersion": {"const": SchemaVersion},
	"Observation.Scenario":      {"pattern": scenarioName.String()},
	"Observation.Flow":          {"enum": allFlows()},
	"Observation.Outcome":       {"enum": []string{string(OutcomeSucceeded), string(OutcomeFailed), string(OutcomeTimedOut)}},
	"Observation.Backends":      {"minProperties": 1},
	"Object.Kind":               {"minLength": 1},
	"Object.Name":               {"minLength": 1},
	"Node.Name":                 {"minLength": 1},
	"Host.Name":                 {"minLength": 1},
	"Phase.Name":                {"minLength": 1},
}

func (g *schemaGen) structSchema(st reflect.Type) map[string]any {
	props := map[string]any{}
	var required []string
	for i := 0; i < st.NumField(); i++ {
		f := st.Field(i)
		name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
		if !f.IsExported() || name == "-" {
			continue
		}
		s := g.typeSchema(f.Type)
		key := st.Name() + "." + f.Name
		if doc := g.docs[key]; doc != "" {
			s["description"] = doc
		}
		for k, v := range fieldConstraints[key] {
			s[k] = v
		}
		props[name] = s
		if !strings.Contains(opts, "omitempty") {
			required = append(required, name)
		}
	}
	out := map[string]any{"type": "object", "properties": props, "additionalProperties": false}
	if len(required) > 0 {
		out["required"] = required
	}
	return out
}

func (g *schemaGen) typeSchema(t reflect.Type) map[string]any {
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch {
	case t == timeType:
		return map[string]any{"type": "string", "format": "date-time"}
	case t.Kind() == reflect.Struct:
		if _, ok := g.defs[t.Name()]; !ok {
			g.defs[t.Name()] = nil // break cycles
			def := g.structSchema(t)
			if doc := g.docs[t.Name()]; doc != "" {
				def["description"] = doc
			}
			g.defs[t.Name()] = def
		}
		return map[string]any{"$ref": "#/$defs/" + t.Name()}
	case t.Kind() == reflect.Slice:
		return map[string]any{"type": "array", "items": g.typeSchema(t.Elem())}
	case t.Kind() == reflect.Map:
		return map[string]any{"type": "object", "additionalProperties": g.typeSchema(t.Elem())}
	case t.Kind() == reflect.String:
		return map[string]any{"type": "string"}
	case t.Kind() == reflect.Int:
		return map[string]any{"type": "integer", "minimum": 0}
	case t.Kind() == reflect.Bool:
		return map[string]any{"type": "boolean"}
	}
	panic("schema: unsupported type " + t.String())
}

// fieldDocs reads the doc comments of the struct types and fields of a file.
func fieldDocs(t *testing.T, file string) map[string]string {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), file, nil, parser.ParseComments)
	if err != nil {
		t.Fatal(err)
	}
	docs := map[string]string{}
	for _, decl := range f.Decls {
		gd, ok := decl.(*ast.GenDecl)
		if !ok {
			continue
		}
		for _, spec := range gd.Specs {
			ts, ok := spec.(*ast.TypeSpec)
			if !ok {
				continue
			}
			st, ok := ts.Type.(*ast.StructType)
			if !ok {
				continue
			}
			docs[ts.Name.Name] = strings.TrimSpace(strings.ReplaceAll(gd.Doc.Text(), "\n", " "))
			for _, field := range st.Fields.List {
				for _, n := range field.Names {
					docs[ts.Name.Name+"."+n.Name] = strings.TrimSpace(strings.ReplaceAll(field.Doc.Text(), "\n", " "))
				}
			}
		}
	}
	return docs
}
