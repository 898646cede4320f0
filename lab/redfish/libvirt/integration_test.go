package libvirt

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/stmcginnis/gofish"
	gfredfish "github.com/stmcginnis/gofish/redfish"
	golibvirt "libvirt.org/go/libvirt"

	"github.com/paritylab/paritylab/lab/images"
	"github.com/paritylab/paritylab/lab/libvirtd"
	"github.com/paritylab/paritylab/lab/machines"
	"github.com/paritylab/paritylab/lab/redfish"
	"github.com/paritylab/paritylab/lab/redfish/redfishtest"
)

// bmc is a lab run with real TCG hosts behind the Redfish emulator.
type bmc struct {
	conn    *golibvirt.Connect
	manager *machines.Manager
	backend *Backend
	server  *redfish.Server
	user    string
	pass    string
}

func newBMC(tb testing.TB, run string, hosts ...string) *bmc {
	tb.Helper()
	return newBMCLogging(tb, run, logr.Discard(), hosts...)
}

// newBMCLogging is newBMC with the backend logging to logger.
func newBMCLogging(tb testing.TB, run string, logger logr.Logger, hosts ...string) *bmc {
	tb.Helper()
	ctx := context.Background()
	d, err := libvirtd.Ensure(ctx, libvirtd.Options{LogDir: tb.TempDir()})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = d.Stop() })
	conn, err := d.Connect()
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { conn.Close() })
	m, err := machines.New(machines.Options{Conn: conn, RunID: run, SerialLogDir: tb.TempDir()})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		if err := m.Close(ctx); err != nil {
			tb.Error(err)
		}
	})
	for _, h := range hosts {
		if _, err := m.Define(machines.HostSpec{Name: h}); err != nil {
			tb.Fatal(err)
		}
	}
	backend, err := New(Options{Conn: conn, RunID: run, Logger: logger})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { backend.Close() })
	b := &bmc{conn: conn, manager: m, backend: backend, user: "admin", pass: "s3cret-bmc"}
	b.server, err = redfish.New(redfish.Options{
		Backend:      backend,
		HtpasswdPath: redfishtest.WriteHtpasswd(tb, map[string]string{b.user: b.pass}),
		// Downloaded media must be where QEMU can read it.
		ImageDir: filepath.Join(m.DataDir(), "media"),
	})
	if err != nil {
		tb.Fatal(err)
	}
	if err := b.server.Start(); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = b.server.Shutdown(context.Background()) })
	return b
}

func (b *bmc) target(t testing.TB, host string) redfishtest.Target {
	h, err := b.manager.Host(host)
	if err != nil {
		t.Fatal(err)
	}
	// Lab hosts are x86_64 domains with one disk, a volume of the run's
	// pool of the size the host spec asked for.
	hw := &redfishtest.Hardware{InstructionSet: "x86-64", DiskBytes: []int64{int64(h.Spec.DiskGiB) << 30}} //nolint:gosec // lab disks are GiBs
	return redfishtest.Target{URL: b.server.URL(), SystemID: h.UUID, User: b.user, Password: b.pass, Hardware: hw}
}

func TestSushyConformanceOnLibvirt(t *testing.T) {
	b := newBMC(t, "pl-sushy", "host-0")
	redfishtest.RunSushyConformance(t, b.target(t, "host-0"))
}

func TestGofishConformanceOnLibvirt(t *testing.T) {
	b := newBMC(t, "pl-gofish", "host-0")
	redfishtest.RunGofishConformance(t, b.target(t, "host-0"))
}

// The virtual-media boot Ironic performs, end to end on a real domain: the
// guest prints its marker, reboots itself like an installer, and the spent
// "once" override sends the next boot to the disk.
func TestInsertedISOBootsOnce(t *testing.T) {
	b := newBMC(t, "pl-vmedia", "host-0")
	h, _ := b.manager.Host("host-0")
	marker := images.MarkerSpec{Marker: "vmedia-once", Reboot: true}
	sys := b.bootFromMedia(t, "host-0", marker)
	path := sys.ODataID
	want := marker.Line() + " uuid=" + h.UUID
	if !waitFor(30*time.Second, func() bool { return logHas(h.SerialLog, want) }) {
		raw, _ := os.ReadFile(h.SerialLog)
		t.Fatalf("no %q in the serial log:\n%s", want, raw)
	}
	// After the guest's own reboot the domain must run with the disk
	// first: the once-override was spent by the first boot.
	if !waitFor(30*time.Second, func() bool { return liveFirstBoot(b.conn, h.UUID) == machines.BootDisk }) {
		t.Fatalf("after the guest rebooted, the live boot order starts with %q, want the disk", liveFirstBoot(b.conn, h.UUID))
	}
	sys, err := gfredfish.GetComputerSystem(sys.GetClient(), path)
	if err != nil {
		t.Fatal(err)
	}
	if sys.Boot.BootSourceOverrideEnabled != gfredfish.DisabledBootSourceOverrideEnabled {
		t.Fatalf("override after the boot: %s, want Disabled", sys.Boot.BootSourceOverrideEnabled)
	}
}

// bootFromMedia inserts a marker ISO into a powered-off host through
// Redfish (gofish), sets boot Cd once and powers it on.
func (b *bmc) bootFromMedia(tb testing.TB, host string, marker images.MarkerSpec) *gfredfish.ComputerSystem {
	tb.Helper()
	store, err := images.Open(images.StoreOptions{})
	if err != nil {
		tb.Fatal(err)
	}
	iso, err := store.MarkerISO(marker)
	if err != nil {
		tb.Fatal(err)
	}
	content, err := os.ReadFile(iso)
	if err != nil {
		tb.Fatal(err)
	}
	url := redfishtest.ServeImage(tb, "marker.iso", content)
	c, err := gofish.Connect(gofish.ClientConfig{Endpoint: b.server.URL(), Username: b.user, Password: b.pass, BasicAuth: true})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(c.Logout)
	target := b.target(tb, host)
	sys, err := gfredfish.GetComputerSystem(c, "/redfish/v1/Systems/"+target.SystemID)
	if err != nil {
		tb.Fatal(err)
	}
	if sys.PowerState != gfredfish.OffPowerState {
		tb.Fatalf("host must start powered off, is %s", sys.PowerState)
	}
	media, err := sys.VirtualMedia()
	if err != nil {
		tb.Fatal(err)
	}
	for _, m := range media {
		if m.ID == redfish.DeviceCd {
			if err := m.InsertMedia(url, true, true); err != nil {
				tb.Fatal(err)
			}
		}
	}
	if err := sys.SetBoot(gfredfish.Boot{BootSourceOverrideTarget: gfredfish.CdBootSourceOverrideTarget,
		BootSourceOverrideEnabled: gfredfish.OnceBootSourceOverrideEnabled}); err != nil {
		tb.Fatal(err)
	}
	if err := sys.Reset(gfredfish.OnResetType); err != nil {
		tb.Fatal(err)
	}
	return sys
}

// BenchmarkPowerOnToMarker measures, per host, the time from the Redfish
// power-on of a host with a marker ISO inserted to its marker line on the
// serial console (TCG on machines where KVM is not usable).
func BenchmarkPowerOnToMarker(bm *testing.B) {
	b := newBMC(bm, "pl-bench", "host-0")
	h, _ := b.manager.Host("host-0")
	for i := 0; bm.Loop(); i++ {
		bm.StopTimer()
		if i > 0 {
			resetHost(bm, b, h)
		}
		marker := images.MarkerSpec{Marker: "bench"}
		bm.StartTimer()
		b.bootFromMedia(bm, "host-0", marker)
		if !waitFor(2*time.Minute, func() bool { return logHas(h.SerialLog, marker.Line()) }) {
			bm.Fatal("no marker")
		}
	}
}

func resetHost(tb testing.TB, b *bmc, h *machines.Host) {
	if err := machines.PowerOff(b.conn, h.UUID); err != nil {
		tb.Fatal(err)
	}
	if err := machines.SetMedia(b.conn, h.UUID, ""); err != nil {
		tb.Fatal(err)
	}
	_ = os.Truncate(h.SerialLog, 0)
}

func liveFirstBoot(conn *golibvirt.Connect, uuid string) string {
	def, err := liveDefinition(conn, uuid)
	if err != nil {
		return ""
	}
	if order := machines.BootOrder(def); len(order) > 0 {
		return order[0]
	}
	return ""
}

func logHas(path, want string) bool {
	raw, err := os.ReadFile(path)
	return err == nil && strings.Contains(string(raw), want)
}

func waitFor(timeout time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		if cond() {
			return true
		}
		time.Sleep(100 * time.Millisecond)
	}
	return cond()
}
