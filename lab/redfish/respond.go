package redfish

import (
	"encoding/json"
	"net/http"
)

// resource is a Redfish resource as sent on the wire. Maps keep the
// renderers short and close to the JSON they produce.
type resource = map[string]any

// link is a Redfish reference to another resource.
func link(path string) resource {
	return resource{"@odata.id": path}
}

func links(paths ...string) []resource {
	out := make([]resource, 0, len(paths))
	for _, p := range paths {
		out = append(out, link(p))
	}
	return out
}

// collection renders a resource collection.
func collection(odataType, path, name string, members []string) resource {
	return resource{
		"@odata.type":         odataType,
		"@odata.id":           path,
		"Name":                name,
		"Members@odata.count": len(members),
		"Members":             links(members...),
	}
}

// writeJSON sends v with the headers every Redfish response carries.
func writeJSON(w http.ResponseWriter, status int, v any) {
	raw, err := json.Marshal(v)
	if err != nil {
		// Only a programming error gets here: the server renders maps
		// and structs of plain values.
		status = http.StatusInternalServerError
		raw = []byte(`{"error":{"code":"` + registry + `InternalError","message":"The response could not be encoded.","@Message.ExtendedInfo":[{"MessageId":"` + registry + `InternalError","Message":"The response could not be encoded.","Severity":"Critical","Resolution":"Report this bug."}]}}`)
	}
	h := w.Header()
	h.Set("Content-Type", "application/json; charset=utf-8")
	h.Set("OData-Version", "4.0")
	h.Set("Cache-Control", "no-cache")
	w.WriteHeader(status)
	_, _ = w.Write(raw)
}

// noContent answers a successful action or update.
func noContent(w http.ResponseWriter) error {
	w.Header().Set("OData-Version", "4.0")
	w.WriteHeader(http.StatusNoContent)
	return nil
}
