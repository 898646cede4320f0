package memory

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/paritylab/paritylab/lab/redfish"
)

var ctx = context.Background()

func newBackend(t *testing.T, specs ...SystemSpec) (*Backend, string) {
	t.Helper()
	if len(specs) == 0 {
		specs = Generate("node", 1)
	}
	b, err := New(Options{Systems: specs})
	if err != nil {
		t.Fatal(err)
	}
	ids, _ := b.Systems(ctx)
	return b, ids[0]
}

func power(t *testing.T, b *Backend, id string) string {
	t.Helper()
	s, err := b.System(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	return s.PowerState
}

func TestResetSemantics(t *testing.T) {
	for _, c := range []struct {
		from   string
		action redfish.ResetType
		to     string
		boots  int
		err    error
	}{
		{"Off", redfish.ResetOn, "On", 1, nil},
		{"On", redfish.ResetOn, "On", 0, nil},
		{"Off", redfish.ResetForceOn, "On", 1, nil},
		{"On", redfish.ResetForceOff, "Off", 0, nil},
		{"Off", redfish.ResetForceOff, "Off", 0, nil},
		{"On", redfish.ResetGracefulShutdown, "Off", 0, nil},
		{"On", redfish.ResetForceRestart, "On", 1, nil},
		{"Off", redfish.ResetForceRestart, "On", 1, nil},
		{"On", redfish.ResetGracefulRestart, "On", 1, nil},
		{"Off", redfish.ResetGracefulRestart, "Off", 0, redfish.ErrConflict},
		{"On", redfish.ResetNmi, "On", 0, nil},
		{"Off", redfish.ResetNmi, "Off", 0, redfish.ErrConflict},
		{"Off", "PushPowerButton", "Off", 0, redfish.ErrInvalid},
	} {
		b, id := newBackend(t, SystemSpec{Name: "n", PowerState: c.from})
		err := b.Reset(ctx, id, c.action)
		if !errors.Is(err, c.err) || (c.err == nil) != (err == nil) {
			t.Errorf("%s from %s: error %v, want %v", c.action, c.from, err, c.err)
		}
		if got := power(t, b, id); got != c.to {
			t.Errorf("%s from %s: %s, want %s", c.action, c.from, got, c.to)
		}
		if h, _ := b.BootHistory(id); len(h) != c.boots {
			t.Errorf("%s from %s: %d boots, want %d", c.action, c.from, len(h), c.boots)
		}
	}
}

func TestOnceOverride(t *testing.T) {
	b, id := newBackend(t)
	if err := b.SetBoot(ctx, id, redfish.BootPatch{Target: "Pxe", Enabled: "Once"}); err != nil {
		t.Fatal(err)
	}
	for _, rt := range []redfish.ResetType{redfish.ResetOn, redfish.ResetForceRestart, redfish.ResetForceOff, redfish.ResetOn} {
		if err := b.Reset(ctx, id, rt); err != nil {
			t.Fatal(err)
		}
	}
	h, _ := b.BootHistory(id)
	if !slices.Equal(h, []string{"Pxe", "Hdd", "Hdd"}) {
		t.Fatalf("boots %v, want Pxe once then Hdd", h)
	}
	s, _ := b.System(ctx, id)
	if s.Boot != (redfish.Boot{Target: "Pxe", Enabled: "Disabled", Mode: "UEFI"}) {
		t.Fatalf("boot %+v", s.Boot)
	}
	if err := b.SetBoot(ctx, id, redfish.BootPatch{Target: "Cd", Enabled: "Continuous"}); err != nil {
		t.Fatal(err)
	}
	_ = b.Reset(ctx, id, redfish.ResetForceRestart)
	_ = b.Reset(ctx, id, redfish.ResetForceRestart)
	if h, _ = b.BootHistory(id); !slices.Equal(h[3:], []string{"Cd", "Cd"}) {
		t.Fatalf("continuous override: boots %v", h)
	}
}

func TestSetBootValidation(t *testing.T) {
	b, id := newBackend(t)
	for _, p := range []redfish.BootPatch{
		{Target: "Floppy"},
		{Enabled: "Sometimes"},
		{Mode: "BIOS"},
		{Mode: "Legacy", Target: "UefiHttp"},
	} {
		if err := b.SetBoot(ctx, id, p); !errors.Is(err, redfish.ErrInvalid) {
			t.Errorf("%+v: %v, want ErrInvalid", p, err)
		}
	}
	if err := b.SetBoot(ctx, id, redfish.BootPatch{Target: "UefiHttp"}); err != nil {
		t.Fatal(err)
	}
	// Leaving UEFI would strand the UefiHttp target.
	if err := b.SetBoot(ctx, id, redfish.BootPatch{Mode: "Legacy"}); !errors.Is(err, redfish.ErrInvalid) || !strings.Contains(err.Error(), "UefiHttp") {
		t.Fatalf("Legacy with target UefiHttp: %v", err)
	}
	s, _ := b.System(ctx, id)
	if s.Boot.Mode != "UEFI" || !slices.Contains(s.BootTargets, "UefiHttp") {
		t.Fatalf("a rejected SetBoot changed %+v", s.Boot)
	}
	if err := b.SetBoot(ctx, id, redfish.BootPatch{Mode: "Legacy", Target: "Hdd"}); err != nil {
		t.Fatal(err)
	}
	if s, _ = b.System(ctx, id); slices.Contains(s.BootTargets, "UefiHttp") {
		t.Fatalf("Legacy targets %v include UefiHttp", s.BootTargets)
	}
}

func TestMedia(t *testing.T) {
	b, id := newBackend(t)
	img := redfish.Image{URL: "http://127.0.0.1/a.iso", Path: "/images/a.iso", WriteProtected: true}
	if err := b.InsertMedia(ctx, id, "Cd", img); err != nil {
		t.Fatal(err)
	}
	if err := b.InsertMedia(ctx, id, "Cd", img); !errors.Is(err, redfish.ErrConflict) {
		t.Fatalf("second insert: %v, want ErrConflict", err)
	}
	if err := b.InsertMedia(ctx, id, "Usb", img); !errors.Is(err, redfish.ErrNotFound) {
		t.Fatalf("unknown device: %v", err)
	}
	if err := b.InsertMedia(ctx, id, "Floppy", redfish.Image{URL: "x"}); !errors.Is(err, redfish.ErrInvalid) {
		t.Fatalf("insert without a file: %v", err)
	}
	s, _ := b.System(ctx, id)
	if m := s.Media["Cd"]; !m.Inserted || m.Image != img.URL || !m.WriteProtected {
		t.Fatalf("Cd %+v", m)
	}
	if got, inserted, _ := b.Attached(id, "Cd"); !inserted || got != img {
		t.Fatalf("attached %+v", got)
	}
	for range 2 { // ejecting an empty device is fine
		if err := b.EjectMedia(ctx, id, "Cd"); err != nil {
			t.Fatal(err)
		}
	}
	if s, _ = b.System(ctx, id); s.Media["Cd"].Inserted || s.Media["Cd"].Image != "" {
		t.Fatalf("after eject %+v", s.Media["Cd"])
	}
	// The view is a copy: changing it changes nothing.
	s.Media["Cd"] = redfish.Media{Inserted: true}
	if s, _ = b.System(ctx, id); s.Media["Cd"].Inserted {
		t.Fatal("System returned shared state")
	}
}

func TestNotFound(t *testing.T) {
	b, _ := newBackend(t)
	if _, err := b.System(ctx, "nope"); !errors.Is(err, redfish.ErrNotFound) {
		t.Fatal(err)
	}
	if _, err := b.Resolve(ctx, "nope"); !errors.Is(err, redfish.ErrNotFound) {
		t.Fatal(err)
	}
	for _, err := range []error{b.Reset(ctx, "nope", redfish.ResetOn), b.SetBoot(ctx, "nope", redfish.BootPatch{}), b.EjectMedia(ctx, "nope", "Cd")} {
		if !errors.Is(err, redfish.ErrNotFound) {
			t.Fatal(err)
		}
	}
	if id, err := b.Resolve(ctx, "node-0"); err != nil || id != NameUUID("node-0") {
		t.Fatalf("Resolve node-0: %s %v", id, err)
	}
}

func TestGenerateIsStableAndUnique(t *testing.T) {
	a, c := Generate("host", 2000), Generate("host", 2000)
	if !slices.EqualFunc(a, c, func(x, y SystemSpec) bool { return x.UUID == y.UUID && slices.Equal(x.MACs, y.MACs) }) {
		t.Fatal("Generate differs between calls")
	}
	if _, err := New(Options{Systems: a}); err != nil {
		t.Fatalf("2000 generated systems: %v", err)
	}
	if a[1].Name != "host-1" || a[1].MACs[0] != "52:54:00:00:00:01" || !validUUID(a[1].UUID) {
		t.Fatalf("spec %+v", a[1])
	}
}

func TestSpecDefaultsAndErrors(t *testing.T) {
	b, id := newBackend(t, SystemSpec{Name: "plain"})
	s, _ := b.System(ctx, id)
	if s.UUID != NameUUID("plain") || s.Processors != DefaultCPUs || s.MemoryGiB != DefaultMemoryGiB ||
		len(s.NICs) != 1 || s.Boot.Mode != "UEFI" || s.PowerState != "Off" || s.Arch != "x86_64" || s.CPUModel != "" {
		t.Fatalf("defaults %+v", s)
	}
	if want := []redfish.Disk{{ID: "vda", CapacityBytes: 120 << 30, Bus: "virtio"}}; !slices.Equal(s.Disks, want) {
		t.Fatalf("default disks %+v, want %+v", s.Disks, want)
	}
	for _, c := range []struct {
		specs []SystemSpec
		want  string
	}{
		{[]SystemSpec{{}}, "name is required"},
		{[]SystemSpec{{Name: "a"}, {Name: "a"}}, "used twice"},
		{[]SystemSpec{{Name: "a", UUID: "x"}}, "not a UUID"},
		{[]SystemSpec{{Name: "a", UUID: NameUUID("z")}, {Name: "b", UUID: strings.ToUpper(NameUUID("z"))}}, "used twice"},
		{[]SystemSpec{{Name: "a", MACs: []string{"52:54:00:00:00:09"}}, {Name: "b", MACs: []string{"52:54:00:00:00:09"}}}, "also used"},
		{[]SystemSpec{{Name: "a", MACs: []string{"nope"}}}, "not an Ethernet MAC"},
		{[]SystemSpec{{Name: "a", BootMode: "BIOS"}}, "bootMode"},
		{[]SystemSpec{{Name: "a", PowerState: "Paused"}}, "powerState"},
		{[]SystemSpec{{Name: "a", CPUs: -1}}, "positive"},
		{[]SystemSpec{{Name: "a", Arch: "x86-64"}}, "arch"},
		{[]SystemSpec{{Name: "a", Disks: []DiskSpec{{SizeGiB: 1}, {}}}}, "disk 1: sizeGiB"},
	} {
		if _, err := New(Options{Systems: c.specs}); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want %q", c.specs, err, c.want)
		}
	}
}

// TestDefaultMACsAvoidExplicitOnes: systems without MACs get addresses no
// other system uses, wherever they stand in the list.
func TestDefaultMACsAvoidExplicitOnes(t *testing.T) {
	specs := append([]SystemSpec{{Name: "plain"}}, Generate("gen", 3)...)
	specs = append(specs, SystemSpec{Name: "plain-2"})
	b, err := New(Options{Systems: specs})
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]string{"plain": "52:54:00:00:00:03", "plain-2": "52:54:00:00:00:04", "gen-0": "52:54:00:00:00:00"} {
		id, _ := b.Resolve(ctx, name)
		if s, _ := b.System(ctx, id); s.NICs[0].MAC != want {
			t.Errorf("%s: MAC %s, want %s", name, s.NICs[0].MAC, want)
		}
	}
}

func TestLoadSpecs(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.json")
	_ = os.WriteFile(good, []byte(`[{"name":"a","cpus":4,"memoryGiB":16,"arch":"aarch64","cpuModel":"Neoverse-N1",
		"disks":[{"sizeGiB":40},{"sizeGiB":500,"ssd":true}],"macs":["52:54:00:aa:bb:cc"],"bootMode":"Legacy"}]`), 0o600)
	specs, err := LoadSpecs(good)
	if err != nil || len(specs) != 1 || specs[0].CPUs != 4 || specs[0].BootMode != "Legacy" || specs[0].Arch != "aarch64" {
		t.Fatalf("%+v %v", specs, err)
	}
	b, id := newBackend(t, specs...)
	s, _ := b.System(ctx, id)
	want := []redfish.Disk{{ID: "vda", CapacityBytes: 40 << 30, Bus: "virtio"}, {ID: "vdb", CapacityBytes: 500 << 30, Bus: "virtio", SSD: true}}
	if s.Arch != "aarch64" || s.CPUModel != "Neoverse-N1" || !slices.Equal(s.Disks, want) {
		t.Fatalf("system from specs: arch %q model %q disks %+v", s.Arch, s.CPUModel, s.Disks)
	}
	bad := filepath.Join(dir, "bad.json")
	_ = os.WriteFile(bad, []byte(`[{"name":"a","ram":16}]`), 0o600)
	if _, err := LoadSpecs(bad); err == nil || !strings.Contains(err.Error(), "ram") {
		t.Fatalf("unknown field: %v", err)
	}
}

func TestVirtioTargetNames(t *testing.T) {
	for i, want := range map[int]string{0: "vda", 1: "vdb", 25: "vdz", 26: "vdaa", 27: "vdab", 701: "vdzz", 702: "vdaaa"} {
		if got := virtioTarget(i); got != want {
			t.Errorf("disk %d: %s, want %s", i, got, want)
		}
	}
}

// TestConcurrentUse is for the race detector: readers and writers at once.
func TestConcurrentUse(t *testing.T) {
	b, err := New(Options{Systems: Generate("n", 4)})
	if err != nil {
		t.Fatal(err)
	}
	ids, _ := b.Systems(ctx)
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Go(func() {
			id := ids[w%len(ids)]
			for range 200 {
				_ = b.Reset(ctx, id, redfish.ResetForceRestart) // boots, whatever the state
				_ = b.SetBoot(ctx, id, redfish.BootPatch{Target: "Cd", Enabled: "Once"})
				_ = b.Reset(ctx, id, redfish.ResetForceOff)
				_, _ = b.System(ctx, id)
				_ = b.EjectMedia(ctx, id, "Cd")
			}
		})
	}
	wg.Wait()
	for _, id := range ids {
		if h, _ := b.BootHistory(id); len(h) != 400 {
			t.Fatalf("%s booted %d times, want 400 (2 workers x 200 ForceRestart)", id, len(h))
		}
	}
}
