package metal3

import (
	"fmt"
	"net/url"
	"slices"
	"strings"
)

// systemsPrefix is where a Redfish service keeps its ComputerSystems.
const systemsPrefix = "/redfish/v1/Systems/"

// redfishDrivers are the BMC address schemes (before any "+http"/"+https")
// that BMO maps to Ironic's redfish hardware type. With no transport
// suffix they mean https, as in BMO.
var redfishDrivers = []string{"redfish", "redfish-virtualmedia"}

// bmcAddress is a parsed spec.bmc.address.
type bmcAddress struct {
	// driver is the scheme before "+": redfish or redfish-virtualmedia.
	driver string
	// endpoint is the Redfish service, scheme://host[:port].
	endpoint string
	// systemPath is /redfish/v1/Systems/<id>, or "" to use the service's
	// only system.
	systemPath string
}

// parseBMCAddress reads redfish[-virtualmedia][+http|+https]://host[:port][/redfish/v1/Systems/<id>].
func parseBMCAddress(address string) (bmcAddress, error) {
	u, err := url.Parse(address)
	if err != nil || u.Scheme == "" || u.Host == "" {
		return bmcAddress{}, fmt.Errorf("BMC address %q is not a URL like redfish-virtualmedia+http://host:port%s<id>", address, systemsPrefix)
	}
	driver, transport, _ := strings.Cut(u.Scheme, "+")
	if !slices.Contains(redfishDrivers, driver) {
		return bmcAddress{}, fmt.Errorf("unknown BMC type %q in address %q: the lab speaks Redfish (%s, with +http or +https)", driver, address, strings.Join(redfishDrivers, ", "))
	}
	switch transport {
	case "":
		transport = "https"
	case "http", "https":
	default:
		return bmcAddress{}, fmt.Errorf("BMC address %q: transport %q is neither http nor https", address, transport)
	}
	if u.User != nil {
		return bmcAddress{}, fmt.Errorf("BMC address %q must not carry credentials: they belong in the Secret of spec.bmc.credentialsName", u.Redacted())
	}
	path, err := systemPath(u.Path)
	if err != nil {
		return bmcAddress{}, fmt.Errorf("BMC address %q: %w", address, err)
	}
	return bmcAddress{driver: driver, endpoint: transport + "://" + u.Host, systemPath: path}, nil
}

func systemPath(p string) (string, error) {
	p = strings.TrimSuffix(p, "/")
	if p == "" {
		return "", nil
	}
	id, ok := strings.CutPrefix(p, systemsPrefix)
	if !ok || id == "" || strings.Contains(id, "/") {
		return "", fmt.Errorf("path %q is not a Redfish system (%s<id>)", p, systemsPrefix)
	}
	return p, nil
}
