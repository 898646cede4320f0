package redfish_test

import (
	"strings"
	"testing"

	"github.com/paritylab/paritylab/lab/redfish"
)

func TestParseBMCAddress(t *testing.T) {
	const id = "5d3a8e02-3c1f-5f5e-9d5e-2f1b0c7a9e11"
	for addr, want := range map[string][2]string{
		"redfish-virtualmedia+http://127.0.0.1:8000/redfish/v1/Systems/" + id: {"http://127.0.0.1:8000", id},
		"redfish+https://127.0.0.1:8443/redfish/v1/Systems/" + id + "/":       {"https://127.0.0.1:8443", id},
		"redfish-virtualmedia://[::1]:8443/redfish/v1/Systems/" + id:          {"https://[::1]:8443", id},
		"REDFISH+HTTP://localhost:8000/redfish/v1/Systems/node-0":             {"http://localhost:8000", "node-0"},
		"http://127.0.0.1:8000/redfish/v1/Systems/" + id:                      {"http://127.0.0.1:8000", id},
		"redfish+http://127.0.0.1:8000/redfish/v1/Systems/with%2Fslash":       {"", ""},
		"ipmi://127.0.0.1:623":                                                {"", ""},
		"redfish+ftp://127.0.0.1/redfish/v1/Systems/" + id:                    {"", ""},
		"redfish+http://127.0.0.1:8000":                                       {"", ""},
		"redfish+http://127.0.0.1:8000/redfish/v1/Managers/" + id:             {"", ""},
		"redfish+http://admin:secret@127.0.0.1:8000/redfish/v1/Systems/" + id: {"", ""},
		"redfish+http:///redfish/v1/Systems/" + id:                            {"", ""},
		"%zz": {"", ""},
	} {
		base, got, err := redfish.ParseBMCAddress(addr)
		if want[0] == "" {
			if err == nil || strings.Contains(err.Error(), "secret") {
				t.Errorf("%s: (%q, %q, %v), want an error without credentials", addr, base, got, err)
			}
			continue
		}
		if err != nil || base != want[0] || got != want[1] {
			t.Errorf("%s: (%q, %q, %v), want (%q, %q)", addr, base, got, err, want[0], want[1])
		}
	}
}
