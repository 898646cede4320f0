package agentcluster

import (
	"net"
	"net/url"
	"strings"
)

// ignitionURL is the URL an AgentClusterInstall gets for an
// AgentCluster's ignition endpoint URL (upstream ignition_endpoint.go
// L72-85): the same URL without its path (HyperShift's ends in /ignition;
// assisted-service appends each host's machine config pool), its query
// and fragment kept. A URL that does not parse, or has no scheme, is kept
// as it is (after the IPv6 rewrite below).
func ignitionURL(raw string) string {
	normalized := bracketIPv6(raw)
	u, err := url.Parse(normalized)
	if err != nil || u.Scheme == "" {
		return normalized
	}
	u.Path, u.RawPath = "", ""
	return u.String()
}

// bracketIPv6 writes the host of a URL such as https://fd00::14:31187/x,
// an IPv6 literal with a port and no brackets, which Go 1.26's url.Parse
// refuses, as https://[fd00::14]:31187/x (upstream ignition_endpoint.go
// L25-70). Any other string, parseable or not, is returned unchanged.
func bracketIPv6(raw string) string {
	if _, err := url.Parse(raw); err == nil {
		return raw
	}
	scheme, rest, ok := strings.Cut(raw, "://")
	if !ok {
		return raw
	}
	hostPort, path := rest, ""
	if i := strings.Index(rest, "/"); i >= 0 {
		hostPort, path = rest[:i], rest[i:]
	}
	if strings.HasPrefix(hostPort, "[") {
		return raw
	}
	i := strings.LastIndex(hostPort, ":")
	if i < 0 {
		return raw
	}
	host, port := hostPort[:i], hostPort[i+1:]
	if port == "" || net.ParseIP(host) == nil || !strings.Contains(host, ":") {
		return raw
	}
	return scheme + "://" + net.JoinHostPort(host, port) + path
}
