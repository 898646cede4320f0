package metal3

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"net/http"
	"slices"
	"time"

	"github.com/stmcginnis/gofish"
	gfredfish "github.com/stmcginnis/gofish/redfish"
)

// powerPollStep is how often a power change is checked.
const powerPollStep = 200 * time.Millisecond

// bmcConn is one reconcile's connection to a host's BMC, with the system
// as last read.
type bmcConn struct {
	endpoint string
	client   *gofish.APIClient
	system   *gfredfish.ComputerSystem
}

// dialInput says how to reach one BMC.
type dialInput struct {
	address  bmcAddress
	username string
	password string
	client   *http.Client
}

// dialBMC connects with HTTP Basic auth (every Redfish service accepts
// it, and it leaves no sessions behind) and reads the system.
func dialBMC(ctx context.Context, in dialInput) (*bmcConn, error) {
	c, err := gofish.ConnectContext(ctx, gofish.ClientConfig{
		Endpoint: in.address.endpoint, Username: in.username, Password: in.password,
		BasicAuth: true, HTTPClient: in.client,
	})
	if err != nil {
		return nil, bmcError("read the service root of "+in.address.endpoint, err)
	}
	conn := &bmcConn{endpoint: in.address.endpoint, client: c}
	path := in.address.systemPath
	if path == "" {
		if path, err = conn.onlySystem(); err != nil {
			return nil, err
		}
	}
	if conn.system, err = gfredfish.GetComputerSystem(c, path); err != nil {
		return nil, bmcError("read system "+path, err)
	}
	return conn, nil
}

// onlySystem is the path of the service's system when it has exactly one,
// as Ironic picks it when redfish_system_id is not given.
func (c *bmcConn) onlySystem() (string, error) {
	systems, err := c.client.Service.Systems()
	if err != nil {
		return "", bmcError("list systems", err)
	}
	if len(systems) != 1 {
		return "", fmt.Errorf("the BMC at %s serves %d systems: name one in the address (%s<id>)", c.endpoint, len(systems), systemsPrefix)
	}
	return systems[0].ODataID, nil
}

// refresh reads the system again.
func (c *bmcConn) refresh() error {
	sys, err := gfredfish.GetComputerSystem(c.client, c.system.ODataID)
	if err != nil {
		return bmcError("read system "+c.system.ID, err)
	}
	c.system = sys
	return nil
}

// poweredOn is the power state as last read; a system powering on or off
// counts as what it becomes.
func (c *bmcConn) poweredOn() bool {
	switch c.system.PowerState {
	case gfredfish.OnPowerState, gfredfish.PoweringOnPowerState:
		return true
	}
	return false
}

// powerOn starts the system and waits until it reports On.
func (c *bmcConn) powerOn(ctx context.Context, timeout time.Duration) error {
	if c.poweredOn() {
		return nil
	}
	if err := c.reset(gfredfish.OnResetType); err != nil {
		return err
	}
	return c.waitPower(ctx, true, gfredfish.OnResetType, timeout)
}

// powerOff stops the system: softly (GracefulShutdown, then ForceOff
// after softTimeout) or, with softTimeout 0, at once.
func (c *bmcConn) powerOff(ctx context.Context, softTimeout, timeout time.Duration) error {
	if !c.poweredOn() {
		return nil
	}
	if softTimeout > 0 && c.supports(gfredfish.GracefulShutdownResetType) {
		if err := c.reset(gfredfish.GracefulShutdownResetType); err == nil &&
			c.waitPower(ctx, false, gfredfish.GracefulShutdownResetType, softTimeout) == nil {
			return nil
		}
	}
	if err := c.reset(gfredfish.ForceOffResetType); err != nil {
		return err
	}
	return c.waitPower(ctx, false, gfredfish.ForceOffResetType, timeout)
}

func (c *bmcConn) supports(rt gfredfish.ResetType) bool {
	return len(c.system.SupportedResetTypes) == 0 || slices.Contains(c.system.SupportedResetTypes, rt)
}

func (c *bmcConn) reset(rt gfredfish.ResetType) error {
	if err := c.system.Reset(rt); err != nil {
		return bmcError(fmt.Sprintf("reset system %s (%s)", c.system.ID, rt), err)
	}
	return nil
}

// waitPower polls the system until its power state is the wanted one.
func (c *bmcConn) waitPower(ctx context.Context, on bool, after gfredfish.ResetType, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		if err := c.refresh(); err != nil {
			return err
		}
		if c.poweredOn() == on {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("system %s is still %s %s after the BMC accepted %s", c.system.ID, c.system.PowerState, timeout, after)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("wait for system %s to power %s: %w", c.system.ID, onOff(on), ctx.Err())
		case <-time.After(powerPollStep):
		}
	}
}

func onOff(on bool) string {
	if on {
		return "on"
	}
	return "off"
}

// bmcTransports are the HTTP transports to BMCs, one that verifies
// certificates and one that does not (spec.bmc.disableCertificateVerification).
type bmcTransports struct {
	verify, insecure *http.Transport
	timeout          time.Duration
}

func newBMCTransports(timeout time.Duration) *bmcTransports {
	mk := func(insecure bool) *http.Transport {
		return &http.Transport{
			// BMCs are reached directly, never through a proxy.
			Proxy:               nil,
			DialContext:         (&net.Dialer{Timeout: 10 * time.Second}).DialContext,
			TLSHandshakeTimeout: 10 * time.Second,
			TLSClientConfig:     &tls.Config{InsecureSkipVerify: insecure, MinVersion: tls.VersionTLS12}, //nolint:gosec // as the BareMetalHost asks
			MaxIdleConnsPerHost: 2,
			IdleConnTimeout:     30 * time.Second,
		}
	}
	return &bmcTransports{verify: mk(false), insecure: mk(true), timeout: timeout}
}

func (t *bmcTransports) client(insecure bool) *http.Client {
	tr := t.verify
	if insecure {
		tr = t.insecure
	}
	return &http.Client{Transport: tr, Timeout: t.timeout}
}
