package redfish

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"slices"
)

// maxBody bounds request bodies: every Redfish request this service takes
// is a small JSON object.
const maxBody = 64 << 10

// object is a parsed JSON object request body. Handlers read it property by
// property so that each error names the property at fault.
type object map[string]json.RawMessage

// readObject reads the request body as a JSON object. An empty body is an
// empty object: callers decide whether that is acceptable.
func readObject(w http.ResponseWriter, r *http.Request) (object, error) {
	raw, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBody))
	if err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			return nil, errPayloadTooLarge(maxBody)
		}
		return nil, errMalformedJSON(err)
	}
	return parseObject(raw)
}

func parseObject(raw []byte) (object, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return object{}, nil
	}
	if raw[0] != '{' {
		return nil, errMalformedJSON(errors.New("the body must be a JSON object ({...})"))
	}
	var obj object
	if err := json.Unmarshal(raw, &obj); err != nil {
		return nil, errMalformedJSON(err)
	}
	return obj, nil
}

// unknown returns the first property (in sorted order, so the answer is
// stable) that is not in allowed, or "".
func (o object) unknown(allowed ...string) string {
	for _, k := range o.keys() {
		if !slices.Contains(allowed, k) {
			return k
		}
	}
	return ""
}

func (o object) keys() []string {
	keys := make([]string, 0, len(o))
	for k := range o {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// typeError says a property is present with the wrong JSON type; raw is
// the value as sent, for the message.
type typeError struct{ raw string }

// str returns a string property; ok is false when it is absent. A JSON
// null counts as absent.
func (o object) str(name string) (val string, ok bool, terr *typeError) {
	raw, present := o[name]
	if !present || isNull(raw) {
		return "", false, nil
	}
	if err := json.Unmarshal(raw, &val); err != nil {
		return "", false, &typeError{raw: clip(raw)}
	}
	return val, true, nil
}

// boolean returns a boolean property; ok is false when it is absent.
func (o object) boolean(name string) (val, ok bool, terr *typeError) {
	raw, present := o[name]
	if !present || isNull(raw) {
		return false, false, nil
	}
	if err := json.Unmarshal(raw, &val); err != nil {
		return false, false, &typeError{raw: clip(raw)}
	}
	return val, true, nil
}

// integer returns an integer property; ok is false when it is absent.
func (o object) integer(name string) (val int, ok bool, terr *typeError) {
	raw, present := o[name]
	if !present || isNull(raw) {
		return 0, false, nil
	}
	if err := json.Unmarshal(raw, &val); err != nil {
		return 0, false, &typeError{raw: clip(raw)}
	}
	return val, true, nil
}

// object returns a nested object property; ok is false when it is absent.
func (o object) object(name string) (val object, ok bool, terr *typeError) {
	raw, present := o[name]
	if !present || isNull(raw) {
		return nil, false, nil
	}
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || raw[0] != '{' {
		return nil, false, &typeError{raw: clip(raw)}
	}
	if err := json.Unmarshal(raw, &val); err != nil {
		return nil, false, &typeError{raw: clip(raw)}
	}
	return val, true, nil
}

func isNull(raw json.RawMessage) bool {
	return bytes.Equal(bytes.TrimSpace(raw), []byte("null"))
}

// clip shortens a raw value for an error message.
func clip(raw json.RawMessage) string {
	const limit = 64
	s := string(bytes.TrimSpace(raw))
	if len(s) > limit {
		return s[:limit] + "..."
	}
	return s
}
