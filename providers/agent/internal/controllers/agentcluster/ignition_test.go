package agentcluster

import "testing"

// The AgentClusterInstall's ignition URL: the path stripped, an
// unbracketed IPv6 host with a port bracketed, anything unparseable or
// without a scheme kept (upstream ignition_endpoint.go L25-85 and the
// cases of its ignition_endpoint_test.go).
func TestIgnitionURL(t *testing.T) {
	expectAll(t, "ignitionURL", ignitionURL, map[string]string{
		"":                                  "",
		"https://1.2.3.4:555/ignition":      "https://1.2.3.4:555",
		"https://1.2.3.4:555":               "https://1.2.3.4:555",
		"https://ignition.example.com/a/b/": "https://ignition.example.com",
		"https://h.example.com/x?v=1#frag":  "https://h.example.com?v=1#frag",
		"https://h.example.com/a%2Fb":       "https://h.example.com",
		"https://fd2e:6f44:5dd8:c956::14:31187/ignition": "https://[fd2e:6f44:5dd8:c956::14]:31187",
		"https://fd2e:6f44:5dd8:c956::14:31187":          "https://[fd2e:6f44:5dd8:c956::14]:31187",
		"http://[1080::8:800:200c:417a]:123/config":      "http://[1080::8:800:200c:417a]:123",
		"ignition.example.com/ignition":                  "ignition.example.com/ignition",
		"https://fd2e::14/ignition":                      "https://fd2e::14/ignition",
	})
}

// The IPv6 rewrite alone keeps the path (upstream
// ignition_endpoint_test.go's normalizeHTTPURL cases).
func TestBracketIPv6(t *testing.T) {
	expectAll(t, "bracketIPv6", bracketIPv6, map[string]string{
		"https://fd2e:6f44:5dd8:c956::14:31187":          "https://[fd2e:6f44:5dd8:c956::14]:31187",
		"https://fd2e:6f44:5dd8:c956::14:31187/ignition": "https://[fd2e:6f44:5dd8:c956::14]:31187/ignition",
		"https://1.2.3.4:555/ignition":                   "https://1.2.3.4:555/ignition",
		"http://[1080::8:800:200c:417a]:123/config":      "http://[1080::8:800:200c:417a]:123/config",
	})
}

// expectAll checks fn(in) == want for each case.
func expectAll(t *testing.T, name string, fn func(string) string, cases map[string]string) {
	t.Helper()
	for in, want := range cases {
		if got := fn(in); got != want {
			t.Errorf("%s(%q) = %q, want %q", name, in, got, want)
		}
	}
}
