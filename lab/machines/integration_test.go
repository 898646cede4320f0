package machines

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"libvirt.org/go/libvirt"
	"libvirt.org/go/libvirtxml"

	"github.com/paritylab/paritylab/lab/images"
	"github.com/paritylab/paritylab/lab/libvirtd"
	"github.com/paritylab/paritylab/lab/process"
	"github.com/paritylab/paritylab/lab/state"
)

// systemConn gives a test a qemu:///system connection, starting (and
// afterwards stopping) libvirt daemons when none run.
func systemConn(t *testing.T) *libvirt.Connect {
	t.Helper()
	d, err := libvirtd.Ensure(context.Background(), libvirtd.Options{LogDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := d.Stop(); err != nil {
			t.Error(err)
		}
	})
	conn, err := d.Connect()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn
}

func newManager(t *testing.T, conn *libvirt.Connect, tracker state.Tracker) *Manager {
	t.Helper()
	runID := "pl-t" + strings.ToLower(strings.ReplaceAll(t.Name(), "_", ""))[:8]
	m, err := New(Options{Conn: conn, RunID: runID, SerialLogDir: t.TempDir(), Tracker: tracker})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func markerISO(t *testing.T, marker string, into string) string {
	t.Helper()
	store, err := images.Open(images.StoreOptions{})
	if err != nil {
		t.Fatal(err)
	}
	iso, err := store.MarkerISO(images.MarkerSpec{Marker: marker})
	if err != nil {
		t.Fatal(err)
	}
	// A copy in the run's data dir: libvirt re-owns what it attaches.
	dst := filepath.Join(into, "media.iso")
	raw, err := os.ReadFile(iso)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dst, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	return dst
}

func TestHostBootsVirtualMediaAndIsRemoved(t *testing.T) {
	conn := systemConn(t)
	m := newManager(t, conn, state.Discard)
	t.Cleanup(func() { _ = m.Close(context.Background()) })
	h, err := m.Define(HostSpec{Name: "host-0", MemoryMiB: 512})
	if err != nil {
		t.Fatal(err)
	}
	if on, err := IsOn(conn, h.UUID); err != nil || on {
		t.Fatalf("a new host must be defined powered off: on=%v err=%v", on, err)
	}

	iso := markerISO(t, "vmedia-test", m.DataDir())
	if err := SetMedia(conn, h.UUID, iso); err != nil {
		t.Fatal(err)
	}
	def, err := Definition(conn, h.UUID)
	if err != nil {
		t.Fatal(err)
	}
	SetBootOrder(def, BootCdrom, BootDisk)
	if err := Redefine(conn, def); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if err := PowerOn(conn, h.UUID); err != nil {
		t.Fatal(err)
	}
	want := images.MarkerPrefix + " vmedia-test uuid=" + h.UUID
	if !waitForLine(context.Background(), h.SerialLog, want, 60*time.Second) {
		raw, _ := os.ReadFile(h.SerialLog)
		t.Fatalf("no marker %q in the serial log:\n%s", want, raw)
	}
	t.Logf("power-on to marker: %s", time.Since(start).Round(100*time.Millisecond))
	qemuLog := filepath.Join(qemuLogDir, h.Domain+".log")
	if _, err := os.Stat(qemuLog); err != nil {
		t.Fatalf("libvirt keeps no QEMU log where the reaper looks: %v", err)
	}

	// Ejecting while running is what a BMC does after deployment.
	if err := SetMedia(conn, h.UUID, ""); err != nil {
		t.Fatal(err)
	}
	if err := PowerOff(conn, h.UUID); err != nil {
		t.Fatal(err)
	}
	if err := m.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.LookupDomainByUUIDString(h.UUID); err == nil {
		t.Fatal("domain survived Close")
	}
	if _, err := conn.LookupStoragePoolByName(m.poolName); err == nil {
		t.Fatal("pool survived Close")
	}
	if _, err := os.Stat(m.DataDir()); !os.IsNotExist(err) {
		t.Fatalf("data dir survived Close: %v", err)
	}
	if _, err := os.Stat(qemuLog); !os.IsNotExist(err) {
		t.Fatalf("libvirt's QEMU log of the domain survived Close: %v", err)
	}
}

// A run that died without cleaning up leaves running domains and a pool;
// its ledger alone must be enough to remove them, even when no libvirt
// daemon runs any more.
func TestLedgerReapsAfterCrash(t *testing.T) {
	RegisterReapers()
	ledger, err := state.Create(filepath.Join(t.TempDir(), "ledger.json"), "crash")
	if err != nil {
		t.Fatal(err)
	}
	// Whatever happens below, leave nothing behind (reaping is idempotent).
	t.Cleanup(func() { _ = ledger.Reap(context.Background()) })
	var uuids []string
	var poolName, dataDir string
	func() {
		d, err := libvirtd.Ensure(context.Background(), libvirtd.Options{LogDir: t.TempDir(), Tracker: ledger})
		if err != nil {
			t.Fatal(err)
		}
		conn, err := d.Connect()
		if err != nil {
			t.Fatal(err)
		}
		m := newManager(t, conn, ledger)
		for _, name := range []string{"host-0", "host-1"} {
			h, err := m.Define(HostSpec{Name: name, MemoryMiB: 256})
			if err != nil {
				t.Fatal(err)
			}
			if err := PowerOn(conn, h.UUID); err != nil {
				t.Fatal(err)
			}
			uuids = append(uuids, h.UUID)
		}
		poolName, dataDir = m.poolName, m.DataDir()
		conn.Close()
		// The "crash": the run lets go of the daemon (the last handle stops
		// it), the domains keep running.
		if d.Started() {
			if err := d.Stop(); err != nil {
				t.Fatal(err)
			}
		}
	}()

	if err := ledger.Reap(context.Background()); err != nil {
		t.Fatal(err)
	}
	if n := len(ledger.Record().Resources); n != 0 {
		t.Fatalf("%d resources left in the ledger: %v", n, ledger.Record().Resources)
	}
	conn := systemConn(t)
	for _, u := range uuids {
		if _, err := conn.LookupDomainByUUIDString(u); err == nil {
			t.Errorf("domain %s survived the reap", u)
		}
	}
	if _, err := conn.LookupStoragePoolByName(poolName); err == nil {
		t.Error("pool survived the reap")
	}
	if _, err := os.Stat(dataDir); !os.IsNotExist(err) {
		t.Errorf("data dir survived the reap: %v", err)
	}
}

func TestProbeAccel(t *testing.T) {
	conn := systemConn(t)
	store, err := images.Open(images.StoreOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cache := filepath.Join(t.TempDir(), "accel.json")
	in := ProbeInput{Conn: conn, Images: store, RunID: "pl-probe", WorkDir: filepath.Join(DataRoot, "pl-probe-test"),
		CacheFile: cache, Timeout: 8 * time.Second}
	res, err := ProbeAccel(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("probe: %+v", res)
	switch res.Accel {
	case AccelKVM:
		if res.BootSeconds <= 0 || !strings.Contains(res.Reason, "booted") {
			t.Errorf("a KVM verdict needs a boot: %+v", res)
		}
	case AccelTCG:
		if res.Reason == "" {
			t.Error("a TCG verdict must say why")
		}
	default:
		t.Fatalf("unknown accel %q", res.Accel)
	}
	if _, err := conn.LookupDomainByName("pl-probe-accel-probe"); err == nil {
		t.Error("probe domain left behind")
	}
	if _, err := os.Stat(in.WorkDir); !os.IsNotExist(err) {
		t.Error("probe work dir left behind")
	}
	if _, err := os.Stat("/dev/kvm"); err == nil {
		again, err := ProbeAccel(context.Background(), in)
		if err != nil || again.Accel != res.Accel || !strings.HasPrefix(again.Reason, "cached") {
			t.Errorf("second probe must come from the cache: %+v %v", again, err)
		}
	}
}

// A UEFI host runs on OVMF with its own variable store, which removing the
// host deletes with it.
func TestUEFIHostHasItsOwnVariables(t *testing.T) {
	conn := systemConn(t)
	m := newManager(t, conn, state.Discard)
	t.Cleanup(func() { _ = m.Close(context.Background()) })
	h, err := m.Define(HostSpec{Name: "uefi-0", Firmware: FirmwareUEFI})
	if err != nil {
		t.Fatal(err)
	}
	if err := PowerOn(conn, h.UUID); err != nil {
		t.Fatal(err)
	}
	dom, err := conn.LookupDomainByUUIDString(h.UUID)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := dom.GetXMLDesc(0)
	dom.Free()
	if err != nil {
		t.Fatal(err)
	}
	var live libvirtxml.Domain
	if err := live.Unmarshal(raw); err != nil {
		t.Fatal(err)
	}
	if live.OS.Loader == nil || !strings.Contains(live.OS.Loader.Path, "OVMF") || live.OS.NVRam == nil {
		t.Fatalf("running UEFI domain without OVMF and variables: %+v", live.OS)
	}
	nvram := live.OS.NVRam.NVRam
	if _, err := os.Stat(nvram); err != nil {
		t.Fatalf("variable store: %v", err)
	}
	if err := m.Remove("uefi-0"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(nvram); !os.IsNotExist(err) {
		t.Fatalf("variable store %s left after Remove: %v", nvram, err)
	}
}

// Domains and pools of a run whose owner died are found and removed without
// any ledger; those of a live run are never touched.
func TestOrphanReaper(t *testing.T) {
	conn := systemConn(t)
	dead := deadIdentity(t)
	orphaned, err := New(Options{Conn: conn, RunID: "pl-orphan", SerialLogDir: t.TempDir(),
		Owner: Metadata{OwnerPID: dead.PID, OwnerStartTicks: dead.StartTicks}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = orphaned.Close(context.Background()) })
	lost, err := orphaned.Define(HostSpec{Name: "host-0"})
	if err != nil {
		t.Fatal(err)
	}
	if err := PowerOn(conn, lost.UUID); err != nil {
		t.Fatal(err)
	}
	alive := newManager(t, conn, state.Discard)
	t.Cleanup(func() { _ = alive.Close(context.Background()) })
	kept, err := alive.Define(HostSpec{Name: "host-0"})
	if err != nil {
		t.Fatal(err)
	}

	found, err := FindOrphans(conn)
	if err != nil {
		t.Fatal(err)
	}
	// Other orphans may exist on the machine; only this run's are ours to
	// judge and remove here.
	var ours []Orphan
	var names []string
	for _, o := range found {
		if o.RunID == alive.opts.RunID {
			t.Fatalf("a live run's object was called an orphan: %s", o)
		}
		if o.RunID == "pl-orphan" {
			ours = append(ours, o)
			names = append(names, o.Name)
		}
	}
	if want := []string{"pl-orphan-host-0", "pl-orphan-pool"}; !slices.Equal(names, want) {
		t.Fatalf("orphans of the dead run %v, want %v", names, want)
	}
	if err := RemoveOrphans(conn, ours); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.LookupDomainByUUIDString(lost.UUID); err == nil {
		t.Error("orphaned domain survived")
	}
	if _, err := os.Stat(orphaned.DataDir()); !os.IsNotExist(err) {
		t.Errorf("orphaned data dir survived: %v", err)
	}
	if _, err := conn.LookupDomainByUUIDString(kept.UUID); err != nil {
		t.Errorf("a live run's domain was removed: %v", err)
	}
}

// deadIdentity is the identity of a process that has exited.
func deadIdentity(t *testing.T) process.Identity {
	t.Helper()
	p, err := process.Start(context.Background(), process.Spec{Name: "short", Path: "/bin/sleep", Args: []string{"300"},
		LogPath: filepath.Join(t.TempDir(), "short.log")})
	if err != nil {
		t.Fatal(err)
	}
	id := p.Identity()
	if err := p.Stop(); err != nil {
		t.Fatal(err)
	}
	return id
}

// Hosts boot the lab's hybrid images both ways the lab uses them, from
// virtual media and written to their disk, with either firmware.
func TestBootsImageFromCDAndDisk(t *testing.T) {
	conn := systemConn(t)
	m := newManager(t, conn, state.Discard)
	t.Cleanup(func() { _ = m.Close(context.Background()) })
	for _, fw := range []Firmware{FirmwareBIOS, FirmwareUEFI} {
		t.Run(string(fw), func(t *testing.T) { bootCDThenDisk(t, conn, m, fw) })
	}
}

func bootCDThenDisk(t *testing.T, conn *libvirt.Connect, m *Manager, fw Firmware) {
	h, err := m.Define(HostSpec{Name: "boot-" + string(fw), Firmware: fw})
	if err != nil {
		t.Fatal(err)
	}
	iso := markerISO(t, string(fw)+"-cd", m.DataDir())
	if err := SetMedia(conn, h.UUID, iso); err != nil {
		t.Fatal(err)
	}
	def, _ := Definition(conn, h.UUID)
	SetBootOrder(def, BootCdrom, BootDisk)
	if err := Redefine(conn, def); err != nil {
		t.Fatal(err)
	}
	if err := PowerOn(conn, h.UUID); err != nil {
		t.Fatal(err)
	}
	if !waitForLine(context.Background(), h.SerialLog, images.MarkerPrefix+" "+string(fw)+"-cd", 90*time.Second) {
		raw, _ := os.ReadFile(h.SerialLog)
		t.Fatalf("%s host did not boot the CD:\n%s", fw, raw)
	}
	if err := PowerOff(conn, h.UUID); err != nil {
		t.Fatal(err)
	}

	disk := markerISO(t, string(fw)+"-disk", t.TempDir())
	if err := WriteImage(conn, h, disk); err != nil {
		t.Fatal(err)
	}
	if err := SetMedia(conn, h.UUID, ""); err != nil {
		t.Fatal(err)
	}
	def, _ = Definition(conn, h.UUID)
	SetBootOrder(def, BootDisk, BootCdrom)
	if err := Redefine(conn, def); err != nil {
		t.Fatal(err)
	}
	if err := PowerOn(conn, h.UUID); err != nil {
		t.Fatal(err)
	}
	if !waitForLine(context.Background(), h.SerialLog, images.MarkerPrefix+" "+string(fw)+"-disk", 90*time.Second) {
		raw, _ := os.ReadFile(h.SerialLog)
		t.Fatalf("%s host did not boot the image written to its disk:\n%s", fw, raw)
	}
	if err := WriteImage(conn, h, disk); err == nil {
		t.Fatal("writing the disk of a running host must be refused")
	}
}
