package results

import _ "embed"

//go:embed observation.schema.json
var observationSchema []byte

// ObservationJSONSchema returns the JSON Schema (draft 2020-12) of the
// Observation format, for drivers written in other languages and for
// editors. It is generated from the Go types (go test ./results -run
// TestObservationSchema -update).
func ObservationJSONSchema() []byte {
	return append([]byte(nil), observationSchema...)
}
