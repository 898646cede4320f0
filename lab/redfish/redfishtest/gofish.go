package redfishtest

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"net/http"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stmcginnis/gofish"
	"github.com/stmcginnis/gofish/common"
	"github.com/stmcginnis/gofish/redfish"
)

// RunGofishConformance drives the target with gofish (a Go Redfish client
// that logs in with a session): it reads the system's processors and
// storage as the lab's bare-metal operator inspects a host, then walks
// the same sequence as RunSushyConformance and checks the same bad
// requests.
func RunGofishConformance(t testing.TB, target Target) {
	t.Helper()
	target = target.withDefaults(t)
	c := gofishConnect(t, target)
	defer c.Logout()
	g := &gofishRun{t: t, c: c, target: target, path: "/redfish/v1/Systems/" + target.SystemID}
	sys := g.system()
	g.hardware(sys)
	cd := g.sequence(sys)
	g.badRequests(sys, cd)
}

func gofishConnect(t testing.TB, target Target) *gofish.APIClient {
	t.Helper()
	cfg := gofish.ClientConfig{Endpoint: target.URL, Username: target.User, Password: target.Password, Insecure: target.CAFile == ""}
	if target.CAFile != "" {
		pem, err := os.ReadFile(target.CAFile)
		if err != nil {
			t.Fatalf("read CA: %v", err)
		}
		pool := x509.NewCertPool()
		pool.AppendCertsFromPEM(pem)
		cfg.HTTPClient = &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}}}
	}
	c, err := gofish.Connect(cfg)
	if err != nil {
		t.Fatalf("gofish: connect to %s: %v", target.URL, err)
	}
	if s, err := c.GetSession(); err != nil || s.Token == "" {
		t.Fatalf("gofish: want a session token after login, got %+v, %v", s, err)
	}
	return c
}

type gofishRun struct {
	t      testing.TB
	c      *gofish.APIClient
	target Target
	path   string
}

func (g *gofishRun) system() *redfish.ComputerSystem {
	g.t.Helper()
	sys, err := redfish.GetComputerSystem(g.c, g.path)
	if err != nil {
		g.t.Fatalf("gofish: get system: %v", err)
	}
	if sys.ID != g.target.SystemID || sys.UUID == "" {
		g.t.Fatalf("gofish: system Id %q UUID %q, want Id %q and a UUID", sys.ID, sys.UUID, g.target.SystemID)
	}
	return sys
}

func (g *gofishRun) cd(sys *redfish.ComputerSystem) *redfish.VirtualMedia {
	g.t.Helper()
	managers, err := sys.ManagedBy()
	if err != nil || len(managers) == 0 {
		g.t.Fatalf("gofish: managers of the system: %v (%d)", err, len(managers))
	}
	if managers[0].ManagerType != redfish.BMCManagerType {
		g.t.Fatalf("gofish: ManagerType %q, want BMC", managers[0].ManagerType)
	}
	media, err := managers[0].VirtualMedia()
	if err != nil {
		g.t.Fatalf("gofish: virtual media: %v", err)
	}
	for _, m := range media {
		if slices.Contains(m.MediaTypes, redfish.CDMediaType) {
			return m
		}
	}
	g.t.Fatalf("gofish: no CD among %d virtual media devices", len(media))
	return nil
}

func (g *gofishRun) sequence(sys *redfish.ComputerSystem) *redfish.VirtualMedia {
	g.t.Helper()
	g.power(sys, redfish.ForceOffResetType, redfish.OffPowerState)
	cd := g.cd(sys)
	g.must("eject (body {})", cd.EjectMedia())
	g.must("insert", cd.InsertMedia(g.target.ImageURL, true, true))
	if cd = g.cd(sys); !cd.Inserted || cd.Image != g.target.ImageURL {
		g.t.Fatalf("gofish: after insert Inserted=%v Image=%q, want true %q", cd.Inserted, cd.Image, g.target.ImageURL)
	}
	g.must("set boot mode", sys.SetBoot(redfish.Boot{BootSourceOverrideMode: redfish.UEFIBootSourceOverrideMode}))
	g.must("set boot Cd once", sys.SetBoot(redfish.Boot{BootSourceOverrideTarget: redfish.CdBootSourceOverrideTarget, BootSourceOverrideEnabled: redfish.OnceBootSourceOverrideEnabled}))
	g.expectBoot(redfish.CdBootSourceOverrideTarget, redfish.OnceBootSourceOverrideEnabled)
	g.power(sys, redfish.OnResetType, redfish.OnPowerState)
	g.expectBoot(redfish.CdBootSourceOverrideTarget, redfish.DisabledBootSourceOverrideEnabled)
	g.power(sys, redfish.ForceOffResetType, redfish.OffPowerState)
	g.must("eject", cd.EjectMedia())
	if cd = g.cd(sys); cd.Inserted {
		g.t.Fatal("gofish: CD still inserted after eject")
	}
	g.must("set boot Hdd continuous", sys.SetBoot(redfish.Boot{BootSourceOverrideTarget: redfish.HddBootSourceOverrideTarget, BootSourceOverrideEnabled: redfish.ContinuousBootSourceOverrideEnabled}))
	g.power(sys, redfish.OnResetType, redfish.OnPowerState)
	g.expectBoot(redfish.HddBootSourceOverrideTarget, redfish.ContinuousBootSourceOverrideEnabled)
	g.power(sys, redfish.ForceOffResetType, redfish.OffPowerState)
	return cd
}

func (g *gofishRun) must(what string, err error) {
	g.t.Helper()
	if err != nil {
		g.t.Fatalf("gofish: %s: %v", what, err)
	}
}

// power resets the system and polls until it reaches want.
func (g *gofishRun) power(sys *redfish.ComputerSystem, rt redfish.ResetType, want redfish.PowerState) {
	g.t.Helper()
	g.must("reset "+string(rt), sys.Reset(rt))
	deadline := time.Now().Add(2 * time.Minute)
	for {
		cur := g.system()
		if cur.PowerState == want {
			return
		}
		if time.Now().After(deadline) {
			g.t.Fatalf("gofish: PowerState stayed %s after %s, want %s", cur.PowerState, rt, want)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func (g *gofishRun) expectBoot(target redfish.BootSourceOverrideTarget, enabled redfish.BootSourceOverrideEnabled) {
	g.t.Helper()
	b := g.system().Boot
	if b.BootSourceOverrideTarget != target || b.BootSourceOverrideEnabled != enabled {
		g.t.Fatalf("gofish: boot %s/%s, want %s/%s", b.BootSourceOverrideTarget, b.BootSourceOverrideEnabled, target, enabled)
	}
}

func (g *gofishRun) badRequests(sys *redfish.ComputerSystem, cd *redfish.VirtualMedia) {
	g.t.Helper()
	reset := g.path + "/Actions/ComputerSystem.Reset"
	_, err := g.c.Post(reset, map[string]string{"ResetType": "Explode"})
	g.expectError("unknown ResetType", err, 400, "ActionParameterNotSupported")
	_, err = g.c.Patch(g.path, map[string]string{"AssetTag": "x"})
	g.expectError("PATCH AssetTag", err, 400, "PropertyUnknown")
	_, err = redfish.GetComputerSystem(g.c, "/redfish/v1/Systems/no-such-system")
	g.expectError("unknown system", err, 404, "ResourceNotFound")
	_, err = redfish.GetProcessor(g.c, g.path+"/Processors/no-such-cpu")
	g.expectError("unknown processor", err, 404, "ResourceNotFound")
	_, err = redfish.GetDrive(g.c, g.path+"/Storage/no-such-storage/Drives/no-such-drive")
	g.expectError("unknown storage", err, 404, "ResourceNotFound")
	err = cd.InsertMedia("http://192.0.2.1/boot.iso", true, true)
	g.expectError("non-loopback image", err, 400, "ActionParameterValueError")
	_, err = gofish.Connect(gofish.ClientConfig{Endpoint: g.target.URL, Username: g.target.User, Password: "wrong-" + g.target.Password, Insecure: true, HTTPClient: g.c.HTTPClient})
	g.expectError("wrong password", err, 401, "NoValidSession")
	if sys.Name != "" && sys.Name != sys.ID {
		byName, err := redfish.GetComputerSystem(g.c, "/redfish/v1/Systems/"+sys.Name)
		if err != nil || byName.ID != sys.ID {
			g.t.Fatalf("gofish: system by name %q (307 alias): %v, %+v", sys.Name, err, byName)
		}
	}
}

func (g *gofishRun) expectError(what string, err error, status int, id string) {
	g.t.Helper()
	var ge *common.Error
	if !errors.As(err, &ge) {
		g.t.Fatalf("gofish: %s: want a Redfish error, got %v", what, err)
	}
	if ge.HTTPReturnedStatusCode != status || !strings.HasSuffix(ge.Code, "."+id) || ge.Message == "" || len(ge.ExtendedInfos) == 0 {
		g.t.Fatalf("gofish: %s: got HTTP %d code %q message %q (%d extended infos), want HTTP %d code *.%s with a message", what, ge.HTTPReturnedStatusCode, ge.Code, ge.Message, len(ge.ExtendedInfos), status, id)
	}
}
