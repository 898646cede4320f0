package scenarios

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"time"

	bmov1alpha1 "github.com/metal3-io/baremetal-operator/apis/metal3.io/v1alpha1"
	"github.com/stmcginnis/gofish"
	gfredfish "github.com/stmcginnis/gofish/redfish"

	"github.com/paritylab/paritylab/framework"
	"github.com/paritylab/paritylab/lab"
	"github.com/paritylab/paritylab/lab/redfish"
	"github.com/paritylab/paritylab/results"
)

// bmcOperations reads, from the lab's Redfish emulator's own operation
// log, what each host's BMC was asked to do since the flow started.
func bmcOperations(ctx context.Context, l *framework.Lab, host *bmov1alpha1.BareMetalHost, since time.Time) ([]results.BMCOperation, error) {
	admin, err := bmcAdmin(l, host)
	if err != nil {
		return nil, err
	}
	ops, err := redfish.FetchOperations(ctx, redfish.FetchOperationsInput{URL: admin.URL, SystemID: admin.SystemID,
		Username: admin.Username, Password: admin.Password, Since: since})
	if err != nil {
		return nil, err
	}
	out := make([]results.BMCOperation, 0, len(ops))
	for _, op := range ops {
		out = append(out, results.BMCOperation{At: op.At.UTC(), Operation: op.Operation})
	}
	return out, nil
}

// bmcAdmin finds a host's system in the lab's Redfish emulator by its
// boot MAC among the lab's hosts (the same server may have a
// BareMetalHost on the hub and a copy in the spoke; the copy may have no
// BMC address but has the same MAC).
func bmcAdmin(l *framework.Lab, host *bmov1alpha1.BareMetalHost) (redfish.AdminInput, error) {
	return bmcAdminByMAC(l, host.Spec.BootMACAddress, host.Name)
}

// bmcAdminByMAC finds the system of the lab host with a boot MAC; name
// says which host in errors.
func bmcAdminByMAC(l *framework.Lab, mac, name string) (redfish.AdminInput, error) {
	inv := l.Inventory
	if inv == nil || inv.BMC == "" {
		return redfish.AdminInput{}, fmt.Errorf("the lab has no BMC emulator")
	}
	system := ""
	for _, h := range inv.Hosts {
		if strings.EqualFold(h.MAC, mac) && h.MAC != "" {
			system = h.UUID
		}
	}
	if system == "" {
		return redfish.AdminInput{}, fmt.Errorf("no lab host has boot MAC %s (host %s)", mac, name)
	}
	user, pass, err := lab.ReadBMCCredentials(inv.CredentialsFile)
	if err != nil {
		return redfish.AdminInput{}, err
	}
	return redfish.AdminInput{URL: inv.BMC, SystemID: system, Username: user, Password: pass}, nil
}

// PoweredOffSince tells whether a host's BMC powered its server off (or
// restarted it) since a time, from the BMC's own operation log: the
// ground truth a BareMetalHost's status may show for less than a poll
// when the power comes back at once.
func PoweredOffSince(ctx context.Context, l *framework.Lab, host *bmov1alpha1.BareMetalHost, since time.Time) (bool, error) {
	n, err := PowerOffsSince(ctx, l, host, since)
	return n > 0, err
}

// PowerOffsSince counts the times a host's BMC powered its server off
// (or restarted it) since a time, from the BMC's operation log.
func PowerOffsSince(ctx context.Context, l *framework.Lab, host *bmov1alpha1.BareMetalHost, since time.Time) (int, error) {
	ops, err := bmcOperations(ctx, l, host, since)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, op := range ops {
		if action, ok := strings.CutPrefix(op.Operation, "power:"); ok && action != "On" && action != "ForceOn" {
			n++
		}
	}
	return n, nil
}

// HangHost makes a host's server hang through the lab's Redfish
// emulator (a hang fault): its BMC keeps reporting it On while its OS
// stops, so that only its Node shows the failure.
func HangHost(ctx context.Context, l *framework.Lab, host *bmov1alpha1.BareMetalHost, mode redfish.HangMode) error {
	admin, err := bmcAdmin(l, host)
	if err != nil {
		return err
	}
	return redfish.PutFault(ctx, admin, redfish.Fault{Hang: mode})
}

// FailHostBMC makes a host's BMC answer every request about its server
// with status (a 5xx: the BMC is up but cannot serve) until
// ClearHostFault. It replaces a hang fault, whose frozen server stays
// frozen until it is powered off.
func FailHostBMC(ctx context.Context, l *framework.Lab, host *bmov1alpha1.BareMetalHost, status int) error {
	admin, err := bmcAdmin(l, host)
	if err != nil {
		return err
	}
	return redfish.PutFault(ctx, admin, redfish.Fault{Status: status})
}

// ClearHostFault ends whatever fault a host's server has.
func ClearHostFault(ctx context.Context, l *framework.Lab, host *bmov1alpha1.BareMetalHost) error {
	admin, err := bmcAdmin(l, host)
	if err != nil {
		return err
	}
	return redfish.DeleteFault(ctx, admin)
}

// PowerCycleAtBMC powers a host's server off and on again at its BMC,
// through a Redfish client no one here wrote (gofish), as an admin does
// for a server no BareMetalHost manages power of (a ZTP day-2 host,
// whose hub host is detached and whose spoke copy has no BMC). The
// power-off ends a hang fault that lasts until one.
func PowerCycleAtBMC(ctx context.Context, l *framework.Lab, host *bmov1alpha1.BareMetalHost) error {
	return withBMCSystem(ctx, l, host.Spec.BootMACAddress, host.Name, func(sys *gfredfish.ComputerSystem) error {
		for _, reset := range []gfredfish.ResetType{gfredfish.ForceOffResetType, gfredfish.OnResetType} {
			if err := sys.Reset(reset); err != nil {
				return fmt.Errorf("%s host %s at its BMC: %w", reset, host.Name, err)
			}
		}
		return nil
	})
}

// withBMCSystem hands fn the system of the lab host with a boot MAC at
// its BMC, read through a Redfish client no one here wrote (gofish); name
// says which host in errors.
func withBMCSystem(ctx context.Context, l *framework.Lab, mac, name string, fn func(*gfredfish.ComputerSystem) error) error {
	admin, err := bmcAdminByMAC(l, mac, name)
	if err != nil {
		return err
	}
	c, err := gofish.ConnectContext(ctx, gofish.ClientConfig{Endpoint: admin.URL, Username: admin.Username, Password: admin.Password, BasicAuth: true})
	if err != nil {
		return fmt.Errorf("connect to the BMC of host %s: %w", name, err)
	}
	defer c.Logout()
	sys, err := gfredfish.GetComputerSystem(c, "/redfish/v1/Systems/"+url.PathEscape(admin.SystemID))
	if err != nil {
		return fmt.Errorf("read the system of host %s: %w", name, err)
	}
	return fn(sys)
}
