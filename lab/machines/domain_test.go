package machines

import (
	"strings"
	"testing"

	"libvirt.org/go/libvirt"
	"libvirt.org/go/libvirtxml"
)

func testSpec() DomainSpec {
	return DomainSpec{
		Name: "pl-test-host-0", Accel: AccelTCG, VCPUs: 2, MemoryMiB: 512, Firmware: FirmwareBIOS,
		DiskPath: "/var/lib/paritylab/pl-test/pool/pl-test-host-0.qcow2", SerialLog: "/tmp/host-0.log",
		MAC: MACFor("host-0"), Serial: "pl-test-host-0", Subnet: "10.100.3.0",
		Metadata: Metadata{RunID: "pl-test", Host: "host-0", OwnerPID: 42, OwnerStartTicks: 7, StateDir: "/s"},
	}
}

// The libvirt test driver validates and stores definitions like the real
// daemon, in process: what it accepts and returns is what libvirt made of
// our XML.
func testConn(t *testing.T) *libvirt.Connect {
	t.Helper()
	conn, err := libvirt.NewConnect("test:///default")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn
}

func defineAndReadBack(t *testing.T, conn *libvirt.Connect, def *libvirtxml.Domain) *libvirtxml.Domain {
	t.Helper()
	raw, err := def.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	dom, err := conn.DomainDefineXML(raw)
	if err != nil {
		t.Fatalf("libvirt refused the domain: %v\n%s", err, raw)
	}
	t.Cleanup(func() { dom.Undefine(); dom.Free() })
	back, err := dom.GetXMLDesc(libvirt.DOMAIN_XML_INACTIVE)
	if err != nil {
		t.Fatal(err)
	}
	var out libvirtxml.Domain
	if err := out.Unmarshal(back); err != nil {
		t.Fatal(err)
	}
	return &out
}

func TestNewDomainAsLibvirtSeesIt(t *testing.T) {
	def, err := NewDomain(testSpec())
	if err != nil {
		t.Fatal(err)
	}
	got := defineAndReadBack(t, testConn(t), def)
	if got.Type != "qemu" {
		t.Errorf("TCG domain type %q, want qemu", got.Type)
	}
	nic := got.Devices.Interfaces[0]
	if nic.MAC.Address != MACFor("host-0") || nic.Source.User == nil {
		t.Errorf("NIC must be user-mode with the derived MAC: %+v", nic)
	}
	if len(nic.IP) != 1 || nic.IP[0].Address != "10.100.3.0" || nic.IP[0].Prefix != 24 {
		t.Errorf("NIC must carry the host's user-mode subnet: %+v", nic.IP)
	}
	cd, err := Cdrom(got)
	if err != nil {
		t.Fatal(err)
	}
	if cd.Target.Bus != "sata" || MediaPath(cd) != "" || cd.ReadOnly == nil {
		t.Errorf("CD-ROM must be an empty read-only SATA drive: %+v", cd)
	}
	if order := BootOrder(got); strings.Join(order, ",") != "disk,cdrom,network" {
		t.Errorf("default boot order %v", order)
	}
	meta, ok := ParseMetadata(got)
	meta.XMLName = testSpec().Metadata.XMLName
	if !ok || meta != testSpec().Metadata {
		t.Errorf("metadata round trip: %+v %v", meta, ok)
	}
	if path := got.Devices.Serials[0].Source.File.Path; path != "/tmp/host-0.log" {
		t.Errorf("serial log %q", path)
	}
}

func TestBootOrderAndFirmwareChanges(t *testing.T) {
	def, err := NewDomain(testSpec())
	if err != nil {
		t.Fatal(err)
	}
	SetBootOrder(def, BootCdrom, BootDisk)
	SetFirmware(def, FirmwareUEFI)
	got := defineAndReadBack(t, testConn(t), def)
	if order := BootOrder(got); strings.Join(order, ",") != "cdrom,disk" {
		t.Errorf("boot order after override %v", order)
	}
	if FirmwareOf(got) != FirmwareUEFI {
		t.Errorf("firmware not UEFI: %+v", got.OS)
	}
	SetFirmware(got, FirmwareBIOS)
	if FirmwareOf(got) != FirmwareBIOS || strings.Join(BootOrder(got), ",") != "cdrom,disk" {
		t.Errorf("switching back to BIOS must keep the boot order: %v %+v", BootOrder(got), got.OS)
	}
}

func TestKVMDomainType(t *testing.T) {
	s := testSpec()
	s.Accel = AccelKVM
	def, err := NewDomain(s)
	if err != nil {
		t.Fatal(err)
	}
	if def.Type != "kvm" {
		t.Fatalf("type %q", def.Type)
	}
}

func TestParseMetadataIgnoresForeignDomains(t *testing.T) {
	if _, ok := ParseMetadata(&libvirtxml.Domain{}); ok {
		t.Error("a domain without metadata is not a lab domain")
	}
	foreign := &libvirtxml.Domain{Metadata: &libvirtxml.DomainMetadata{XML: `<x:vm xmlns:x="https://example.com/x" run="r"/>`}}
	if _, ok := ParseMetadata(foreign); ok {
		t.Error("metadata of another namespace is not ours")
	}
}

func TestMACFor(t *testing.T) {
	a, b := MACFor("host-0"), MACFor("host-1")
	if a != MACFor("host-0") || a == b {
		t.Fatalf("MACs must be stable and distinct: %s %s", a, b)
	}
	if !strings.HasPrefix(a, "52:54:00:") || len(a) != 17 {
		t.Fatalf("MAC %s not in QEMU's range", a)
	}
}

func TestHostSpecValidation(t *testing.T) {
	for _, s := range []HostSpec{{Name: "Bad_Name"}, {Name: ""}, {Name: "ok", Firmware: "coreboot"}} {
		if err := s.defaults(); err == nil {
			t.Errorf("spec %+v must be refused", s)
		}
	}
	s := HostSpec{Name: "host-0"}
	if err := s.defaults(); err != nil || s.VCPUs != 1 || s.MemoryMiB != 1024 || s.Firmware != FirmwareBIOS || s.MAC != MACFor("host-0") {
		t.Fatalf("defaults: %+v %v", s, err)
	}
}

// The kept QEMU log says when a domain started and why it stopped, without
// the command lines between.
func TestQEMULogEventsKeepsStartsAndStops(t *testing.T) {
	raw := []byte(`2026-11-24 02:28:03.580+0000: starting up libvirt version: 9.0.0
LC_ALL=C \
/usr/bin/qemu-system-x86_64 \
-name guest=pl-x-host-1 \
-msg timestamp=on
2026-11-24T02:28:19.001Z qemu-system-x86_64: terminating on signal 15
2026-11-24 02:28:19.100+0000: shutting down, reason=crashed
`)
	want := `2026-11-24 02:28:03.580+0000: starting up libvirt version: 9.0.0
2026-11-24T02:28:19.001Z qemu-system-x86_64: terminating on signal 15
2026-11-24 02:28:19.100+0000: shutting down, reason=crashed
`
	if got := string(qemuLogEvents(raw)); got != want {
		t.Fatalf("kept:\n%s\nwant:\n%s", got, want)
	}
}
