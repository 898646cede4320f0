package agentapi

import (
	"encoding/base64"
	"encoding/json"
	"sort"
)

// PointerIgnitionVersion is the Ignition spec version of pointer configs.
const PointerIgnitionVersion = "3.2.0"

// PointerConfig and the types below are the parts of an Ignition config
// a pointer config uses; the node agent reads them back.
type (
	PointerConfig struct {
		Ignition PointerIgnitionSection `json:"ignition"`
	}
	PointerIgnitionSection struct {
		Version  string           `json:"version"`
		Config   PointerMerge     `json:"config"`
		Security *PointerSecurity `json:"security,omitempty"`
	}
	PointerMerge struct {
		Merge []IgnitionResource `json:"merge"`
	}
	PointerSecurity struct {
		TLS struct {
			CertificateAuthorities []IgnitionResource `json:"certificateAuthorities"`
		} `json:"tls"`
	}
	IgnitionResource struct {
		Source      string           `json:"source"`
		HTTPHeaders []IgnitionHeader `json:"httpHeaders,omitempty"`
	}
	IgnitionHeader struct {
		Name  string `json:"name"`
		Value string `json:"value"`
	}
)

// NewPointerIgnition builds a pointer Ignition config: its only content is
// a config.merge source fetched with the given HTTP headers, trusting
// caPEM (when set) for it, as a data:text/plain;base64 URL as both
// assisted-service and HyperShift write it. The headers are written in
// name order, so the same input gives the same bytes.
func NewPointerIgnition(source string, headers map[string]string, caPEM []byte) (json.RawMessage, error) {
	merge := IgnitionResource{Source: source}
	names := make([]string, 0, len(headers))
	for n := range headers {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		merge.HTTPHeaders = append(merge.HTTPHeaders, IgnitionHeader{Name: n, Value: headers[n]})
	}
	cfg := PointerConfig{Ignition: PointerIgnitionSection{Version: PointerIgnitionVersion, Config: PointerMerge{Merge: []IgnitionResource{merge}}}}
	if len(caPEM) > 0 {
		cfg.Ignition.Security = &PointerSecurity{}
		cfg.Ignition.Security.TLS.CertificateAuthorities = []IgnitionResource{{
			Source: "data:text/plain;base64," + base64.StdEncoding.EncodeToString(caPEM),
		}}
	}
	return json.Marshal(cfg)
}
