package images

import (
	"bytes"
	"compress/gzip"
	"io"
	"os"
	"os/exec"
	"strings"
	"testing"
)

func openStore(t *testing.T) *Store {
	t.Helper()
	cache, err := CacheDir()
	if err != nil {
		t.Fatal(err)
	}
	s, err := Open(StoreOptions{CacheDir: cache})
	if err != nil {
		t.Fatal(err)
	}
	// Build into a private dir so the test sees real builds, not the cache.
	s.dir = t.TempDir()
	return s
}

func TestInitramfsContentAndCaching(t *testing.T) {
	s := openStore(t)
	spec := InitramfsSpec{
		Init:    "#!/bin/sh\necho hi\n",
		Files:   []File{{Path: "/etc/paritylab/infraenv", Content: []byte("ie-1")}},
		Modules: []string{"virtio_net"},
	}
	path, err := s.Initramfs(spec)
	if err != nil {
		t.Fatal(err)
	}
	again, err := s.Initramfs(spec)
	if err != nil || again != path {
		t.Fatalf("same spec must give the cached image: %s vs %s (%v)", path, again, err)
	}
	spec.Files[0].Content = []byte("ie-2")
	other, err := s.Initramfs(spec)
	if err != nil || other == path {
		t.Fatalf("changed content must give a new image, got %s (%v)", other, err)
	}

	listing := cpioList(t, other)
	for _, want := range []string{"init", "bin/busybox", "bin/sh", "etc/paritylab/infraenv", "etc/paritylab/modules",
		"lib/modules/" + s.kernel.Version + "/kernel/drivers/net/virtio_net.ko"} {
		if !strings.Contains(listing, want+"\n") {
			t.Errorf("initramfs lacks %s; has:\n%s", want, listing)
		}
	}
	// virtio_net needs net_failover and failover, which must load first.
	order := string(cpioFile(t, other, "etc/paritylab/modules"))
	if i, j := strings.Index(order, "/failover.ko"), strings.Index(order, "/virtio_net.ko"); i < 0 || j < 0 || i > j {
		t.Errorf("module load order wrong:\n%s", order)
	}
}

func TestUnknownModuleIsAnError(t *testing.T) {
	s := openStore(t)
	_, err := s.Initramfs(InitramfsSpec{Init: "x", Modules: []string{"no_such_module"}})
	if err == nil || !strings.Contains(err.Error(), "no_such_module") {
		t.Fatalf("want an error naming the module, got %v", err)
	}
}

func TestISOIsBootableAndCached(t *testing.T) {
	s := openStore(t)
	m := MarkerSpec{Marker: "t1"}
	iso, err := s.MarkerISO(m)
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("xorriso", "-indev", iso, "-report_el_torito", "plain").CombinedOutput()
	if err != nil {
		t.Fatalf("xorriso report: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "BIOS") || !strings.Contains(string(out), "UEFI") {
		t.Fatalf("ISO needs BIOS and UEFI El Torito boot entries:\n%s", out)
	}
	again, err := s.MarkerISO(m)
	if err != nil || again != iso {
		t.Fatalf("rebuilt an unchanged ISO: %s vs %s (%v)", iso, again, err)
	}
	if _, err := s.ISO(ISOSpec{Label: strings.Repeat("x", 33)}); err == nil {
		t.Fatal("a label over 32 characters must be refused")
	}
}

// cpioList lists an initramfs with the system cpio, an independent reader.
func cpioList(t *testing.T, path string) string {
	t.Helper()
	cmd := exec.Command("cpio", "-it", "--quiet")
	cmd.Stdin = bytes.NewReader(gunzip(t, path))
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("cpio -it: %v\n%s", err, out)
	}
	return string(out)
}

func cpioFile(t *testing.T, archive, name string) []byte {
	t.Helper()
	dir := t.TempDir()
	// Without -d: like the kernel, cpio must find each parent directory
	// already created by an earlier entry.
	cmd := exec.Command("cpio", "-i", "--quiet")
	cmd.Dir = dir
	cmd.Stdin = bytes.NewReader(gunzip(t, archive))
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("cpio -id: %v\n%s", err, out)
	}
	b, err := os.ReadFile(dir + "/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func gunzip(t *testing.T, path string) []byte {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestConfigDrive(t *testing.T) {
	s := openStore(t)
	cd := ConfigDrive{UserData: []byte(`{"mode":"node"}`), MetaData: map[string]string{"uuid": "u-1", "hostname": "host-0"}}
	iso, err := s.ConfigDriveISO(cd)
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("xorriso", "-indev", iso, "-pvd_info").CombinedOutput()
	if err != nil || !strings.Contains(string(out), "Volume Id    : config-2") {
		t.Fatalf("config drive label: %v\n%s", err, out)
	}
	dst := t.TempDir() + "/user_data"
	if out, err := exec.Command("xorriso", "-osirrox", "on", "-indev", iso, "-extract", "/openstack/latest/user_data", dst).CombinedOutput(); err != nil {
		t.Fatalf("extract user_data: %v\n%s", err, out)
	}
	data, err := os.ReadFile(dst)
	if err != nil || string(data) != `{"mode":"node"}` {
		t.Fatalf("user_data: %v %q", err, data)
	}
}
