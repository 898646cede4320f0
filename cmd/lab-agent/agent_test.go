package main

import (
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/paritylab/paritylab/lab/assisted/agentapi"
)

// fakeRoot writes a /proc and /sys tree like a 2-CPU VM's.
func fakeRoot(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	files := map[string]string{
		"proc/cpuinfo":                               "processor\t: 0\nmodel name\t: QEMU Virtual CPU\ncpu MHz\t\t: 2400.000\nflags\t\t: fpu sse hypervisor\n\nprocessor\t: 1\nmodel name\t: QEMU Virtual CPU\n",
		"proc/meminfo":                               "MemTotal:       16380000 kB\nMemFree:        1000 kB\n",
		"proc/net/route":                             "Iface\tDestination\tGateway \tFlags\n eth0\t00000000\t0202000A\t0003\n eth0\t0002000A\t00000000\t0001\n",
		"sys/class/dmi/id/product_uuid":              "9C6F4B2E-1111-2222-3333-444455556666\n",
		"sys/class/dmi/id/sys_vendor":                "paritylab\n",
		"sys/class/dmi/id/product_name":              "virtual bare-metal host\n",
		"sys/class/dmi/id/product_serial":            "pl-x-host-0\n",
		"sys/block/vda/size":                         "209715200\n",
		"sys/block/vda/queue/rotational":             "1\n",
		"sys/block/sr0/size":                         "2048\n",
		"sys/devices/system/memory/block_size_bytes": "8000000\n",
	}
	for p, c := range files {
		full := filepath.Join(root, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 128 { // 128 blocks of 128 MiB = 16 GiB
		if err := os.MkdirAll(filepath.Join(root, "sys/devices/system/memory", "memory"+itoa(i)), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

func itoa(i int) string {
	return string(rune('0'+i/100)) + string(rune('0'+i/10%10)) + string(rune('0'+i%10))
}

func fakeSystem(t *testing.T) *system {
	mac, _ := net.ParseMAC("52:54:00:aa:bb:cc")
	return &system{root: fakeRoot(t), interfaces: func() ([]net.Interface, error) {
		return []net.Interface{
			{Name: "lo", Flags: net.FlagLoopback | net.FlagUp},
			{Name: "eth0", HardwareAddr: mac, MTU: 1500, Flags: net.FlagUp | net.FlagBroadcast},
		}, nil
	}}
}

func TestInventory(t *testing.T) {
	inv := fakeSystem(t).inventory()
	if inv.CPU.Count != 2 || inv.CPU.ModelName != "QEMU Virtual CPU" || inv.CPU.Architecture != "x86_64" {
		t.Errorf("cpu %+v", inv.CPU)
	}
	if inv.Memory.UsableBytes != 16380000*1024 || inv.Memory.PhysicalBytes != 16<<30 {
		t.Errorf("memory %+v", inv.Memory)
	}
	if len(inv.Disks) != 2 {
		t.Fatalf("disks %+v", inv.Disks)
	}
	vda, sr0 := inv.Disks[1], inv.Disks[0]
	if vda.Path != "/dev/vda" || vda.SizeBytes != 100<<30 || !vda.InstallationEligibility.Eligible || vda.DriveType != "HDD" {
		t.Errorf("vda %+v", vda)
	}
	if sr0.DriveType != "ODD" || sr0.InstallationEligibility.Eligible {
		t.Errorf("an optical drive must not be eligible: %+v", sr0)
	}
	if len(inv.Interfaces) != 1 || inv.Interfaces[0].MacAddress != "52:54:00:aa:bb:cc" {
		t.Errorf("interfaces %+v", inv.Interfaces)
	}
	if inv.SystemVendor.Manufacturer != "paritylab" || !inv.SystemVendor.Virtual || inv.Boot.CurrentBootMode != "bios" {
		t.Errorf("vendor %+v boot %+v", inv.SystemVendor, inv.Boot)
	}
}

func TestHostIDAndGateway(t *testing.T) {
	s := fakeSystem(t)
	if id := s.hostID(); id != "9c6f4b2e-1111-2222-3333-444455556666" {
		t.Errorf("host id %q", id)
	}
	gw, err := s.defaultGateway()
	if err != nil || gw != "10.0.2.2" {
		t.Errorf("gateway %q %v", gw, err)
	}
	if h, _ := s.serviceHost("127.0.0.1"); h != "127.0.0.1" {
		t.Errorf("explicit service host ignored: %s", h)
	}
	if s.bootDisk() != "/dev/vda" {
		t.Errorf("boot disk %s", s.bootDisk())
	}
}

func TestConfigAreaRoundTrip(t *testing.T) {
	disk := filepath.Join(t.TempDir(), "disk.img")
	if err := os.WriteFile(disk, make([]byte, 4<<20), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := readConfigArea(disk); err != errNoConfigArea {
		t.Fatalf("empty disk: %v", err)
	}
	want := agentapi.NodeConfig{Name: "master-0", ProviderID: "baremetalhost:///ns/h/u", APIPort: 6443,
		Labels: map[string]string{"a": "b"}, Report: &agentapi.ReportTarget{InfraEnvID: "ie", HostID: "h"}}
	if err := writeConfigArea(disk, want); err != nil {
		t.Fatal(err)
	}
	got, err := readConfigArea(disk)
	if err != nil || got.Name != want.Name || got.ProviderID != want.ProviderID || got.Labels["a"] != "b" || got.Report.HostID != "h" {
		t.Fatalf("round trip: %+v %v", got, err)
	}
	small := filepath.Join(t.TempDir(), "small.img")
	_ = os.WriteFile(small, make([]byte, 1024), 0o644)
	if err := writeConfigArea(small, want); err == nil {
		t.Fatal("a disk smaller than the config area must be refused")
	}
}

func TestISOLabel(t *testing.T) {
	tree := t.TempDir()
	if err := os.MkdirAll(filepath.Join(tree, "openstack", "latest"), 0o755); err != nil {
		t.Fatal(err)
	}
	iso := filepath.Join(t.TempDir(), "cd.iso")
	if out, err := exec.Command("xorriso", "-as", "mkisofs", "-quiet", "-o", iso, "-V", "config-2", "-J", "-R", tree).CombinedOutput(); err != nil {
		t.Fatalf("xorriso: %v\n%s", err, out)
	}
	label, err := isoLabel(iso)
	if err != nil || label != "config-2" {
		t.Fatalf("label %q %v", label, err)
	}
	if _, err := isoLabel("/etc/hostname"); err == nil {
		t.Fatal("a file that is not ISO 9660 must fail")
	}
}

func TestParseUserData(t *testing.T) {
	plain := `{"node":{"name":"worker-0","apiPort":6443}}`
	ud, err := parseUserData([]byte(plain))
	if err != nil || ud.Node == nil || ud.Node.Name != "worker-0" {
		t.Fatalf("plain: %+v %v", ud, err)
	}
	ign := `{"ignition":{"version":"3.2.0"},"storage":{"files":[{"path":"/etc/other","contents":{"source":"data:,x"}},` +
		`{"path":"/etc/paritylab/userdata.json","contents":{"source":"data:,%7B%22discovery%22%3A%7B%22infraEnvID%22%3A%22ie-9%22%7D%7D"}}]}}`
	ud, err = parseUserData([]byte(ign))
	if err != nil || ud.Discovery == nil || ud.Discovery.InfraEnvID != "ie-9" {
		t.Fatalf("ignition: %+v %v", ud, err)
	}
	b64 := `{"ignition":{"version":"3.2.0"},"storage":{"files":[{"path":"/etc/paritylab/userdata.json","contents":{"source":"data:;base64,eyJub2RlIjp7Im5hbWUiOiJuIn19"}}]}}`
	if ud, err = parseUserData([]byte(b64)); err != nil || ud.Node == nil || ud.Node.Name != "n" {
		t.Fatalf("base64: %+v %v", ud, err)
	}
	if _, err := parseUserData([]byte(`{"ignition":{"version":"3.2.0"}}`)); err == nil {
		t.Fatal("ignition without the user data file must fail")
	}
	if _, err := parseUserData([]byte(`not json`)); err == nil {
		t.Fatal("garbage must fail")
	}
}

// The guest brings one CPU online (maxcpus=1); the inventory counts the
// CPUs the kernel found present, the domain's hardware.
func TestCPUCountIsThePresentCPUs(t *testing.T) {
	for present, want := range map[string]int64{"0-3\n": 4, "0\n": 1, "0-1,4-5": 4, "": 2, "garbage": 2} {
		s := fakeSystem(t)
		if present != "" {
			dir := filepath.Join(s.root, "sys/devices/system/cpu")
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, "present"), []byte(present), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		if got := s.cpu().Count; got != want {
			t.Errorf("present %q: %d CPUs, want %d (the online ones, 2, when present is unreadable)", present, got, want)
		}
	}
}

// The kubelet settings that name config drive metadata are resolved from
// the drive's meta_data.json; without a drive they resolve empty.
func TestNodeSettingsFromConfigDriveMetadata(t *testing.T) {
	cfg := agentapi.NodeConfig{Name: "n", ProviderID: "${METADATA_PID}",
		Labels: map[string]string{"metal3.io/uuid": "$METADATA_UUID", "rack": "r1"}}
	got := withMetadata(cfg, map[string]string{"uuid": "5e0c", "pid": "metal3://ns/h/m"})
	if got.ProviderID != "metal3://ns/h/m" || got.Labels["metal3.io/uuid"] != "5e0c" || got.Labels["rack"] != "r1" {
		t.Fatalf("resolved %+v", got)
	}
	if cfg.Labels["metal3.io/uuid"] != "$METADATA_UUID" {
		t.Fatal("the config passed in was changed")
	}
	none := withMetadata(cfg, nil)
	if none.ProviderID != "" || none.Labels["metal3.io/uuid"] != "" {
		t.Fatalf("without a drive: %+v", none)
	}
}
