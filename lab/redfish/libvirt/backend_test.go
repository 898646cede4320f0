package libvirt

import (
	"context"
	"errors"
	"slices"
	"testing"

	golibvirt "libvirt.org/go/libvirt"
	"libvirt.org/go/libvirtxml"

	"github.com/paritylab/paritylab/lab/libvirtd"
	"github.com/paritylab/paritylab/lab/machines"
	"github.com/paritylab/paritylab/lab/redfish"
)

// testDriver defines lab domains on libvirt's in-process test driver, which
// stores and validates definitions and tracks power state like the real one.
func testDriver(t *testing.T) *golibvirt.Connect {
	t.Helper()
	if err := libvirtd.EnableEvents(); err != nil {
		t.Fatal(err)
	}
	conn, err := golibvirt.NewConnect("test:///default")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn
}

func defineHost(t *testing.T, conn *golibvirt.Connect, run, name string) string {
	t.Helper()
	return defineHostWith(t, conn, run, name, "/dev/null", nil)
}

// defineHostWith defines a host whose disk is the file at diskPath, with
// the definition changed by mutate (if not nil) before it is defined.
func defineHostWith(t *testing.T, conn *golibvirt.Connect, run, name, diskPath string, mutate func(*libvirtxml.Domain)) string {
	t.Helper()
	def, err := machines.NewDomain(machines.DomainSpec{
		Name: run + "-" + name, Accel: machines.AccelTCG, VCPUs: 2, MemoryMiB: 3072,
		Firmware: machines.FirmwareBIOS, DiskPath: diskPath, SerialLog: "/dev/null",
		MAC: machines.MACFor(name), Serial: name, Metadata: machines.Metadata{RunID: run, Host: name},
	})
	if err != nil {
		t.Fatal(err)
	}
	if mutate != nil {
		mutate(def)
	}
	raw, err := def.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	dom, err := conn.DomainDefineXML(raw)
	if err != nil {
		t.Fatal(err)
	}
	defer dom.Free()
	uuid, _ := dom.GetUUIDString()
	t.Cleanup(func() {
		if d, err := conn.LookupDomainByUUIDString(uuid); err == nil {
			d.Destroy()
			d.Undefine()
			d.Free()
		}
	})
	return uuid
}

func newBackend(t *testing.T, conn *golibvirt.Connect, run string) *Backend {
	t.Helper()
	b, err := New(Options{Conn: conn, RunID: run})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	return b
}

func TestServesOnlyItsRun(t *testing.T) {
	conn := testDriver(t)
	a := defineHost(t, conn, "pl-a", "host-0")
	b0 := defineHost(t, conn, "pl-a", "host-1")
	defineHost(t, conn, "pl-b", "host-0")
	b := newBackend(t, conn, "pl-a")
	ctx := context.Background()
	ids, err := b.Systems(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(ids, []string{a, b0}) {
		t.Fatalf("systems %v, want the run's two hosts by name", ids)
	}
	if _, err := b.Resolve(ctx, "pl-b-host-0"); !errors.Is(err, redfish.ErrNotFound) {
		t.Fatalf("another run's host must be unknown, got %v", err)
	}
	// The test driver's own domain has no paritylab metadata.
	if _, err := b.Resolve(ctx, "test"); !errors.Is(err, redfish.ErrNotFound) {
		t.Fatalf("a foreign domain must be unknown, got %v", err)
	}
	id, err := b.Resolve(ctx, "pl-a-host-0")
	if err != nil || id != a {
		t.Fatalf("resolve: %s %v", id, err)
	}
}

func TestSystemReport(t *testing.T) {
	conn := testDriver(t)
	id := defineHost(t, conn, "pl-a", "host-0")
	sys, err := newBackend(t, conn, "pl-a").System(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	if sys.UUID != id || sys.PowerState != redfish.PowerOff || sys.Processors != 2 || sys.MemoryGiB != 3 {
		t.Errorf("system %+v", sys)
	}
	if len(sys.NICs) != 1 || sys.NICs[0].MAC != machines.MACFor("host-0") {
		t.Errorf("NICs %+v", sys.NICs)
	}
	if sys.Boot != (redfish.Boot{Target: redfish.BootTargetNone, Enabled: redfish.BootDisabled, Mode: redfish.BootModeLegacy}) {
		t.Errorf("boot %+v", sys.Boot)
	}
	if cd := sys.Media[redfish.DeviceCd]; cd.Inserted || !slices.Contains(cd.MediaTypes, "CD") {
		t.Errorf("CD %+v", cd)
	}
}

func TestOnceOverrideIsSpentByThePowerOn(t *testing.T) {
	conn := testDriver(t)
	id := defineHost(t, conn, "pl-a", "host-0")
	b := newBackend(t, conn, "pl-a")
	ctx := context.Background()
	if err := b.SetBoot(ctx, id, redfish.BootPatch{Target: redfish.BootTargetCd, Enabled: redfish.BootOnce}); err != nil {
		t.Fatal(err)
	}
	def, _ := machines.Definition(conn, id)
	if order := machines.BootOrder(def); order[0] != machines.BootCdrom {
		t.Fatalf("boot order before power-on %v, want cdrom first", order)
	}
	if err := b.Reset(ctx, id, redfish.ResetOn); err != nil {
		t.Fatal(err)
	}
	sys, _ := b.System(ctx, id)
	if sys.PowerState != redfish.PowerOn || sys.Boot.Enabled != redfish.BootDisabled || sys.Boot.Target != redfish.BootTargetCd {
		t.Fatalf("after power-on: %+v", sys)
	}
	def, _ = machines.Definition(conn, id)
	if order := machines.BootOrder(def); order[0] != machines.BootDisk {
		t.Fatalf("next boot order %v, want the disk first again", order)
	}
}

func TestContinuousOverrideAndModes(t *testing.T) {
	conn := testDriver(t)
	id := defineHost(t, conn, "pl-a", "host-0")
	b := newBackend(t, conn, "pl-a")
	ctx := context.Background()
	if err := b.SetBoot(ctx, id, redfish.BootPatch{Target: redfish.BootTargetPxe, Enabled: redfish.BootContinuous, Mode: redfish.BootModeUEFI}); err != nil {
		t.Fatal(err)
	}
	if err := b.Reset(ctx, id, redfish.ResetOn); err != nil {
		t.Fatal(err)
	}
	sys, _ := b.System(ctx, id)
	if sys.Boot != (redfish.Boot{Target: redfish.BootTargetPxe, Enabled: redfish.BootContinuous, Mode: redfish.BootModeUEFI}) {
		t.Fatalf("continuous override must stay: %+v", sys.Boot)
	}
	if !slices.Contains(sys.BootTargets, redfish.BootTargetUefiHTTP) {
		t.Errorf("UEFI mode must offer UefiHttp: %v", sys.BootTargets)
	}
	def, _ := machines.Definition(conn, id)
	if machines.FirmwareOf(def) != machines.FirmwareUEFI || machines.BootOrder(def)[0] != machines.BootNetwork {
		t.Errorf("definition: firmware %s order %v", machines.FirmwareOf(def), machines.BootOrder(def))
	}
	err := b.SetBoot(ctx, id, redfish.BootPatch{Target: redfish.BootTargetUefiHTTP, Mode: redfish.BootModeLegacy})
	if !errors.Is(err, redfish.ErrInvalid) {
		t.Fatalf("UefiHttp in Legacy mode must be invalid, got %v", err)
	}
}

func TestPowerActions(t *testing.T) {
	conn := testDriver(t)
	id := defineHost(t, conn, "pl-a", "host-0")
	b := newBackend(t, conn, "pl-a")
	ctx := context.Background()
	for _, a := range []redfish.ResetType{redfish.ResetNmi, redfish.ResetGracefulRestart} {
		if err := b.Reset(ctx, id, a); !errors.Is(err, redfish.ErrConflict) {
			t.Errorf("%s while off: want ErrConflict, got %v", a, err)
		}
	}
	steps := []struct {
		action redfish.ResetType
		want   string
	}{
		{redfish.ResetForceOn, redfish.PowerOn},
		{redfish.ResetOn, redfish.PowerOn},
		{redfish.ResetForceRestart, redfish.PowerOn},
		{redfish.ResetForceOff, redfish.PowerOff},
		{redfish.ResetForceOff, redfish.PowerOff},
		{redfish.ResetForceRestart, redfish.PowerOn},
	}
	for _, s := range steps {
		if err := b.Reset(ctx, id, s.action); err != nil {
			t.Fatalf("%s: %v", s.action, err)
		}
		if sys, _ := b.System(ctx, id); sys.PowerState != s.want {
			t.Fatalf("after %s: %s, want %s", s.action, sys.PowerState, s.want)
		}
	}
	if err := b.Reset(ctx, id, "Explode"); !errors.Is(err, redfish.ErrInvalid) {
		t.Errorf("unknown reset: %v", err)
	}
	if err := b.InsertMedia(ctx, id, redfish.DeviceFloppy, redfish.Image{Path: "/x"}); !errors.Is(err, redfish.ErrInvalid) {
		t.Errorf("floppy insert: %v", err)
	}
	if _, err := b.System(ctx, "00000000-0000-0000-0000-000000000000"); !errors.Is(err, redfish.ErrNotFound) {
		t.Errorf("unknown system: %v", err)
	}
}
