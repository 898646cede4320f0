package redfish

import (
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"
)

// bmcDrivers are the BareMetalHost bmc.address schemes, before any
// "+http"/"+https", that name a Redfish BMC.
var bmcDrivers = []string{"redfish", "redfish-virtualmedia"}

// ParseBMCAddress splits a BareMetalHost bmc.address such as
// redfish-virtualmedia+http://127.0.0.1:8000/redfish/v1/Systems/<uuid>
// into the emulator's base URL (scheme://host:port, for
// FetchOperationsInput.URL) and the system ID. A driver without "+http" or
// "+https" means https, as in the bare-metal operator; plain http:// and
// https:// URLs of a system are accepted too.
func ParseBMCAddress(addr string) (baseURL, systemID string, err error) {
	u, err := url.Parse(addr)
	if err != nil {
		// Not echoed: an unparsable address cannot be redacted.
		return "", "", errors.New("BMC address is not a URL like redfish-virtualmedia+http://host:port" + systemsPath + "/<id>")
	}
	transport, err := bmcTransport(u.Scheme)
	if err != nil {
		return "", "", fmt.Errorf("BMC address %q: %w", u.Redacted(), err)
	}
	if u.Host == "" {
		return "", "", fmt.Errorf("BMC address %q has no host", u.Redacted())
	}
	if u.User != nil {
		return "", "", fmt.Errorf("BMC address %q must not carry credentials: they belong in the BMC Secret", u.Redacted())
	}
	id, ok := strings.CutPrefix(strings.TrimSuffix(u.Path, "/"), systemsPath+"/")
	if !ok || id == "" || strings.Contains(id, "/") {
		return "", "", fmt.Errorf("BMC address %q does not name a system: want a path like %s/<id>", u.Redacted(), systemsPath)
	}
	return transport + "://" + u.Host, id, nil
}

// bmcTransport maps a bmc.address scheme to http or https.
func bmcTransport(scheme string) (string, error) {
	scheme = strings.ToLower(scheme)
	if scheme == "http" || scheme == "https" {
		return scheme, nil
	}
	driver, transport, _ := strings.Cut(scheme, "+")
	if !slices.Contains(bmcDrivers, driver) {
		return "", fmt.Errorf("scheme %q is not a Redfish BMC (%s, optionally +http or +https)", scheme, strings.Join(bmcDrivers, ", "))
	}
	switch transport {
	case "":
		return "https", nil
	case "http", "https":
		return transport, nil
	}
	return "", fmt.Errorf("transport %q of scheme %q is neither http nor https", transport, scheme)
}
