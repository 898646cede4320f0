package libvirt

import (
	"context"
	"testing"
	"time"

	"github.com/stmcginnis/gofish"
	gfredfish "github.com/stmcginnis/gofish/redfish"

	"github.com/paritylab/paritylab/lab/images"
	"github.com/paritylab/paritylab/lab/machines"
	"github.com/paritylab/paritylab/lab/redfish"
)

// A hang fault freezes a running guest: the BMC goes on reporting it On,
// the guest prints nothing more, the power button does nothing, and a
// power cycle boots the disk again (untilPowerOff); a host that always
// hangs is frozen again by every power-on.
func TestHangFreezesTheGuestUntilPoweredOff(t *testing.T) {
	b := newBMC(t, "pl-hang", "host-0")
	h, _ := b.manager.Host("host-0")
	store, err := images.Open(images.StoreOptions{})
	if err != nil {
		t.Fatal(err)
	}
	marker := images.MarkerSpec{Marker: "disk-hang"}
	iso, err := store.MarkerISO(marker)
	if err != nil {
		t.Fatal(err)
	}
	if err := machines.WriteImage(b.conn, h, iso); err != nil {
		t.Fatal(err)
	}
	c, err := gofish.Connect(gofish.ClientConfig{Endpoint: b.server.URL(), Username: b.user, Password: b.pass, BasicAuth: true})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Logout()
	path := "/redfish/v1/Systems/" + h.UUID
	sys, err := gfredfish.GetComputerSystem(c, path)
	if err != nil {
		t.Fatal(err)
	}
	if err := sys.Reset(gfredfish.OnResetType); err != nil {
		t.Fatal(err)
	}
	if !waitFor(90*time.Second, func() bool { return markerCount(h.SerialLog, marker.Line()) == 1 }) {
		t.Fatal("no marker from the disk")
	}
	ctx := context.Background()
	if err := b.server.SetFault(ctx, h.UUID, redfish.Fault{Hang: redfish.HangUntilPowerOff}); err != nil {
		t.Fatal(err)
	}
	expectPaused(t, b, h.UUID, true)
	if err := sys.Reset(gfredfish.GracefulShutdownResetType); err != nil {
		t.Fatal(err)
	}
	if sys, err = gfredfish.GetComputerSystem(c, path); err != nil || sys.PowerState != gfredfish.OnPowerState {
		t.Fatalf("after GracefulShutdown of a hung host: %v, power %s; want On", err, sys.PowerState)
	}
	if err := sys.Reset(gfredfish.ForceOffResetType); err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := b.server.FaultOf(ctx, h.UUID); ok {
		t.Fatal("the hang outlived the power-off")
	}
	if err := sys.Reset(gfredfish.OnResetType); err != nil {
		t.Fatal(err)
	}
	if !waitFor(90*time.Second, func() bool { return markerCount(h.SerialLog, marker.Line()) == 2 }) {
		t.Fatal("no marker from the disk after the power cycle")
	}
	expectPaused(t, b, h.UUID, false)

	if err := b.server.SetFault(ctx, h.UUID, redfish.Fault{Hang: redfish.HangAlways}); err != nil {
		t.Fatal(err)
	}
	if err := sys.Reset(gfredfish.ForceRestartResetType); err != nil {
		t.Fatal(err)
	}
	expectPaused(t, b, h.UUID, true)
}

func expectPaused(t *testing.T, b *bmc, uuid string, want bool) {
	t.Helper()
	got, err := machines.IsPaused(b.conn, uuid)
	if err != nil {
		t.Fatal(err)
	}
	if got != want {
		t.Fatalf("domain paused %v, want %v", got, want)
	}
}
