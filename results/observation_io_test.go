package results

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestObservationRoundTrip(t *testing.T) {
	o := genObservation(7, newIdentities(7), time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC), false)
	file := filepath.Join(t.TempDir(), "o.json")
	if err := WriteFile(file, o); err != nil {
		t.Fatal(err)
	}
	back, err := ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(Aspects(o), Aspects(back)) || back.SchemaVersion != SchemaVersion {
		t.Fatal("aspects changed through JSON")
	}
}

func TestDecodeRejectsOtherSchemaVersions(t *testing.T) {
	_, err := Decode(strings.NewReader(`{"schemaVersion": "paritylab.io/observation/v1", "scenario": "x"}`))
	if !errors.Is(err, ErrUnsupportedSchema) || !strings.Contains(err.Error(), `"paritylab.io/observation/v1"`) || !strings.Contains(err.Error(), SchemaVersion) {
		t.Fatalf("got %v", err)
	}
	for _, doc := range []string{`{"scenario": "x"}`, `{"schemaVersion": "other.io/v1"}`, `{"schemaVersion": 3}`} {
		if _, err := Decode(strings.NewReader(doc)); err == nil {
			t.Errorf("%s: accepted", doc)
		}
	}
	_, err = Decode(strings.NewReader(`{"kind": "Pod"}`))
	if !errors.Is(err, ErrNotObservation) {
		t.Fatalf("got %v", err)
	}
}

func TestValidateReportsEveryProblem(t *testing.T) {
	o := &Observation{SchemaVersion: SchemaVersion, Scenario: "Bad Name", Flow: "x", Outcome: "maybe",
		StartedAt: time.Unix(10, 0), FinishedAt: time.Unix(5, 0),
		Milestones: []Milestone{{Name: "a", ReachedAt: ptrTime(time.Unix(1, 0))}, {Name: "a"}},
		Objects:    []Object{{Kind: "Machine"}}, Nodes: []Node{{}}, Hosts: []Host{{}}}
	err := o.Validate()
	for _, want := range []string{"scenario", "flow", "outcome", "backends", "finishedAt", "reached before", "appears twice", "objects[0]", "nodes[0]", "hosts[0]"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q: %v", want, err)
		}
	}
}

func TestLoadDirPairsAndSkipsOtherJSON(t *testing.T) {
	dir := t.TempDir()
	for _, f := range []string{"real/day1.mapi.json", "real/day1.capi.json", "acceptance/scale-sample.mapi.json"} {
		data, err := os.ReadFile(filepath.Join("testdata", f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, filepath.Base(f)), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "junit-config.json"), []byte(`{"kind": "whatever"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	pairs, err := LoadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(pairs) != 2 || pairs[0].Scenario != "day1" || pairs[1].B != nil {
		t.Fatalf("got %+v", pairs)
	}
	var buf bytes.Buffer
	if err := mustBuild(t, pairs, nil, DefaultOptions()).WriteMarkdown(&buf); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), "the CAPI flow left no observation") {
		t.Error("missing flow not reported")
	}
	if err := os.WriteFile(filepath.Join(dir, "dup.json"), mustRead(t, filepath.Join("testdata", "real", "day1.mapi.json")), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadDir(dir); err == nil || !strings.Contains(err.Error(), "two mapi observations") {
		t.Fatalf("duplicate flow: %v", err)
	}
	if _, err := LoadDir(t.TempDir()); err == nil {
		t.Fatal("empty dir accepted")
	}
}

func TestNewPair(t *testing.T) {
	m := readObservation(t, "testdata/real/day1.mapi.json")
	c := readObservation(t, "testdata/real/day1.capi.json")
	p, err := NewPair(c, m)
	if err != nil || p.A != m || p.B != c {
		t.Fatalf("got %+v, %v", p, err)
	}
	if _, err := NewPair(m, m); err == nil {
		t.Error("two MAPI observations accepted")
	}
	other := readObservation(t, "testdata/acceptance/scale-sample.capi.json")
	if _, err := NewPair(m, other); err == nil || !strings.Contains(err.Error(), "differ") {
		t.Errorf("different scenarios: %v", err)
	}
}

func ptrTime(t time.Time) *time.Time { return &t }
