package metal3

import (
	"strings"
	"testing"
)

func TestParseBMCAddress(t *testing.T) {
	for _, c := range []struct {
		in   string
		want bmcAddress
	}{
		{"redfish-virtualmedia+http://127.0.0.1:8000/redfish/v1/Systems/abc", bmcAddress{"redfish-virtualmedia", "http://127.0.0.1:8000", "/redfish/v1/Systems/abc"}},
		{"redfish+https://bmc.example:443/redfish/v1/Systems/1/", bmcAddress{"redfish", "https://bmc.example:443", "/redfish/v1/Systems/1"}},
		{"redfish://[::1]:8000/redfish/v1/Systems/x", bmcAddress{"redfish", "https://[::1]:8000", "/redfish/v1/Systems/x"}},
		{"REDFISH-VIRTUALMEDIA+HTTP://127.0.0.1", bmcAddress{"redfish-virtualmedia", "http://127.0.0.1", ""}},
	} {
		got, err := parseBMCAddress(c.in)
		if err != nil || got != c.want {
			t.Errorf("%s: %+v, %v; want %+v", c.in, got, err, c.want)
		}
	}
	for _, c := range []struct{ in, want string }{
		{"", "is not a URL"},
		{"127.0.0.1:8000", "is not a URL"},
		{"ipmi://10.0.0.1", `unknown BMC type "ipmi"`},
		{"idrac-virtualmedia://10.0.0.1/redfish/v1/Systems/1", `unknown BMC type "idrac-virtualmedia"`},
		{"redfish+ftp://h/redfish/v1/Systems/1", `transport "ftp"`},
		{"redfish+http://u:p@h/redfish/v1/Systems/1", "must not carry credentials"},
		{"redfish+http://h/redfish/v1/Managers/1", "is not a Redfish system"},
		{"redfish+http://h/redfish/v1/Systems/", "is not a Redfish system"},
		{"redfish+http://h/redfish/v1/Systems/1/Bios", "is not a Redfish system"},
	} {
		if _, err := parseBMCAddress(c.in); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: error %v, want %q", c.in, err, c.want)
		}
	}
}

// FuzzParseBMCAddress: any address parses or is refused, never panics, and
// what parses points at an http(s) endpoint.
func FuzzParseBMCAddress(f *testing.F) {
	for _, s := range []string{"redfish-virtualmedia+http://127.0.0.1:1/redfish/v1/Systems/a", "redfish://h", "%", "redfish+http://[::1", "redfish+http://h/redfish/v1/Systems/%2F"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		a, err := parseBMCAddress(in)
		if err != nil {
			return
		}
		if !strings.HasPrefix(a.endpoint, "http://") && !strings.HasPrefix(a.endpoint, "https://") {
			t.Fatalf("%q parsed to endpoint %q", in, a.endpoint)
		}
	})
}
