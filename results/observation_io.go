package results

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"strings"
)

// ErrUnsupportedSchema is returned (wrapped) when a document carries a
// schemaVersion this package does not read.
var ErrUnsupportedSchema = errors.New("unsupported observation schema version")

// ErrNotObservation is returned (wrapped) when a JSON document has no
// schemaVersion of the observation family at all.
var ErrNotObservation = errors.New("not a paritylab observation")

// schemaFamily prefixes every observation schema version, past and future.
const schemaFamily = "paritylab.io/observation/"

// Decode reads one Observation. It rejects other schema versions, unknown
// fields and observations that fail Validate.
func Decode(r io.Reader) (*Observation, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("read observation: %w", err)
	}
	if err := checkSchemaVersion(data); err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var o Observation
	if err := dec.Decode(&o); err != nil {
		return nil, fmt.Errorf("decode observation: %w", err)
	}
	if err := o.Validate(); err != nil {
		return nil, fmt.Errorf("invalid observation: %w", err)
	}
	return &o, nil
}

func checkSchemaVersion(data []byte) error {
	var head struct {
		SchemaVersion *string `json:"schemaVersion"`
	}
	if err := json.Unmarshal(data, &head); err != nil {
		return fmt.Errorf("decode observation: %w", err)
	}
	switch {
	case head.SchemaVersion == nil || !strings.HasPrefix(*head.SchemaVersion, schemaFamily):
		return fmt.Errorf("%w: schemaVersion must be %q", ErrNotObservation, SchemaVersion)
	case *head.SchemaVersion != SchemaVersion:
		return fmt.Errorf("%w %q: this paritylab reads %q only; use a paritylab built for that version",
			ErrUnsupportedSchema, *head.SchemaVersion, SchemaVersion)
	}
	return nil
}

// ReadFile decodes the Observation in a file.
func ReadFile(path string) (*Observation, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("open observation: %w", err)
	}
	defer f.Close()
	o, err := Decode(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return o, nil
}

// Encode writes o as indented JSON, setting SchemaVersion if empty.
func Encode(w io.Writer, o *Observation) error {
	if o.SchemaVersion == "" {
		o.SchemaVersion = SchemaVersion
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if err := enc.Encode(o); err != nil {
		return fmt.Errorf("encode observation: %w", err)
	}
	return nil
}

// WriteFile writes o to path (see Encode).
func WriteFile(path string, o *Observation) error {
	var buf bytes.Buffer
	if err := Encode(&buf, o); err != nil {
		return err
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		return fmt.Errorf("write observation: %w", err)
	}
	return nil
}

var scenarioName = regexp.MustCompile(`^[a-z0-9]([a-z0-9-]*[a-z0-9])?$`)

// Validate reports every way o breaks the schema's rules that JSON typing
// alone cannot express.
func (o *Observation) Validate() error {
	var errs []error
	add := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	if o.SchemaVersion != SchemaVersion {
		add("schemaVersion %q is not %q", o.SchemaVersion, SchemaVersion)
	}
	if !scenarioName.MatchString(o.Scenario) {
		add("scenario %q must be lower-case letters, digits and dashes", o.Scenario)
	}
	// Every reader of this SchemaVersion rejects a flow it does not know
	// here, as Decode validates what it reads: a flow added for new
	// scenarios (capi-private, capi-migrated) fails an older reader
	// loudly, never lands on a side, and so needed no new version.
	if sides := SidesOf(o.Scenario); !sides.Has(o.Flow) {
		add("flow %q must be %q or %q, the flows scenario %q compares", o.Flow, sides.A, sides.B, o.Scenario)
	}
	switch o.Outcome {
	case OutcomeSucceeded, OutcomeFailed, OutcomeTimedOut:
	default:
		add("outcome %q must be %s, %s or %s", o.Outcome, OutcomeSucceeded, OutcomeFailed, OutcomeTimedOut)
	}
	if len(o.Backends) == 0 {
		add("backends must name the implementation of at least one component")
	}
	if o.FinishedAt.Before(o.StartedAt) {
		add("finishedAt %s is before startedAt %s", o.FinishedAt, o.StartedAt)
	}
	errs = append(errs, o.validatePhases()...)
	errs = append(errs, o.validateObjects()...)
	return errors.Join(errs...)
}

func (o *Observation) validatePhases() []error {
	var errs []error
	seen := map[string]bool{}
	last := o.StartedAt
	for i, m := range o.Milestones {
		if !scenarioName.MatchString(m.Name) {
			errs = append(errs, fmt.Errorf("milestones[%d]: name %q must be lower-case letters, digits and dashes", i, m.Name))
		}
		if seen[m.Name] {
			errs = append(errs, fmt.Errorf("milestones[%d]: milestone %q appears twice", i, m.Name))
		}
		seen[m.Name] = true
		if m.ReachedAt == nil {
			continue
		}
		if m.ReachedAt.Before(last) {
			errs = append(errs, fmt.Errorf("milestones[%d] %q: reached before the milestone before it (or the start)", i, m.Name))
		}
		last = *m.ReachedAt
	}
	for i, id := range o.Identifiers {
		if !scenarioName.MatchString(id.Kind) || id.Value == "" {
			errs = append(errs, fmt.Errorf("identifiers[%d]: kind %q must be lower-case letters, digits and dashes, and value non-empty", i, id.Kind))
		}
	}
	return errs
}

func (o *Observation) validateObjects() []error {
	var errs []error
	for i, obj := range o.Objects {
		if obj.Kind == "" || obj.Name == "" {
			errs = append(errs, fmt.Errorf("objects[%d]: kind and name are required", i))
		}
	}
	for i, n := range o.Nodes {
		if n.Name == "" {
			errs = append(errs, fmt.Errorf("nodes[%d]: name is required", i))
		}
	}
	for i, h := range o.Hosts {
		if h.Name == "" {
			errs = append(errs, fmt.Errorf("hosts[%d]: name is required", i))
		}
	}
	return errs
}
