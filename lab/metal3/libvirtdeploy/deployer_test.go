package libvirtdeploy

import (
	"context"
	"crypto/md5" //nolint:gosec // testing md5 checksums
	"crypto/sha256"
	"crypto/sha512"
	"encoding/hex"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/paritylab/paritylab/lab/metal3"
)

// testDeployer has no libvirt connection: enough for downloads and
// checksums.
func testDeployer() *Deployer {
	return &Deployer{opts: Options{MaxImageBytes: 1 << 20, HTTPClient: withRedirectCheck(loopbackClient())}}
}

func serve(t *testing.T, files map[string]string) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/redirect-out" {
			http.Redirect(w, r, "http://192.0.2.1/image", http.StatusFound)
			return
		}
		body, ok := files[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		_, _ = w.Write([]byte(body))
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

func TestFetchVerifiesChecksums(t *testing.T) {
	content := "disk image bytes"
	s256 := sha256.Sum256([]byte(content))
	s512 := sha512.Sum512([]byte(content))
	m5 := md5.Sum([]byte(content)) //nolint:gosec // test
	h256, h512, hm5 := hex.EncodeToString(s256[:]), hex.EncodeToString(s512[:]), hex.EncodeToString(m5[:])
	base := serve(t, map[string]string{
		"/img.raw":        content,
		"/SHA256SUMS":     "0000000000000000000000000000000000000000000000000000000000000000  other.raw\n" + h256 + " *img.raw\n",
		"/img.raw.sha512": h512 + "\n",
	})
	d := testDeployer()
	ok := []metal3.Image{
		{URL: base + "/img.raw"},
		{URL: base + "/img.raw", Checksum: h256},
		{URL: base + "/img.raw", Checksum: strings.ToUpper(h256), ChecksumType: "sha256"},
		{URL: base + "/img.raw", Checksum: hm5, ChecksumType: "auto"},
		{URL: base + "/img.raw", Checksum: base + "/SHA256SUMS"},
		{URL: base + "/img.raw", Checksum: base + "/img.raw.sha512", ChecksumType: "sha512"},
	}
	for _, img := range ok {
		if _, err := d.fetchImage(context.Background(), img, t.TempDir()); err != nil {
			t.Errorf("%+v: %v", img, err)
		}
	}
	bad := []struct {
		img  metal3.Image
		want string
	}{
		{metal3.Image{URL: base + "/img.raw", Checksum: strings.Repeat("0", 64)}, "the download is not the image"},
		{metal3.Image{URL: base + "/img.raw", Checksum: h256, ChecksumType: "md5"}, "is not md5"},
		{metal3.Image{URL: base + "/img.raw", Checksum: "xyz"}, "not hexadecimal"},
		{metal3.Image{URL: base + "/img.raw", Checksum: h256, ChecksumType: "crc32"}, "checksum type"},
		{metal3.Image{URL: base + "/missing.raw"}, "404"},
		{metal3.Image{URL: "http://192.0.2.1/img.raw"}, "not on loopback"},
		{metal3.Image{URL: base + "/redirect-out"}, "not on loopback"},
		{metal3.Image{URL: "file:///etc/passwd"}, "not http or https"},
		{metal3.Image{URL: base + "/img.raw", Checksum: base + "/SHA256SUMS-missing"}, "checksum file"},
	}
	for _, c := range bad {
		if _, err := d.fetchImage(context.Background(), c.img, t.TempDir()); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: error %v, want %q", c.img, err, c.want)
		}
	}
}

func TestDownloadLimit(t *testing.T) {
	base := serve(t, map[string]string{"/big": strings.Repeat("x", 2<<20)})
	d := testDeployer()
	err := d.download(context.Background(), base+"/big", filepath.Join(t.TempDir(), "f"), 1<<20)
	if err == nil || !strings.Contains(err.Error(), "larger than") {
		t.Fatalf("download over the limit: %v", err)
	}
}

func TestLoopbackClientRefusesOtherAddresses(t *testing.T) {
	// A name that resolves elsewhere is refused at connect time too.
	req, _ := http.NewRequest(http.MethodGet, "http://192.0.2.1:9/x", nil) //nolint:noctx // test
	if _, err := loopbackClient().Do(req); err == nil || !strings.Contains(err.Error(), "loopback only") {
		t.Fatalf("connect to 192.0.2.1: %v", err)
	}
	for _, u := range []string{"http://localhost:1/x", "https://[::1]/x", "http://127.1.2.3/x"} {
		pu, _ := url.Parse(u)
		if err := checkURL(pu); err != nil {
			t.Errorf("%s: %v", u, err)
		}
	}
}

func TestToRawConvertsQcow2(t *testing.T) {
	dir := t.TempDir()
	raw := filepath.Join(dir, "src.raw")
	if err := os.WriteFile(raw, []byte(strings.Repeat("paritylab", 1000)), 0o600); err != nil {
		t.Fatal(err)
	}
	qcow := filepath.Join(dir, "src.qcow2")
	if out, err := exec.Command("qemu-img", "convert", "-f", "raw", "-O", "qcow2", raw, qcow).CombinedOutput(); err != nil {
		t.Fatalf("qemu-img: %v %s", err, out)
	}
	for _, format := range []string{"qcow2", ""} {
		got, err := toRaw(context.Background(), qcow, format, t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		b, _ := os.ReadFile(got)
		if !strings.HasPrefix(string(b), "paritylabparitylab") {
			t.Fatalf("format %q: converted image starts %q", format, b[:min(len(b), 20)])
		}
	}
	if got, err := toRaw(context.Background(), raw, "", dir); err != nil || got != raw {
		t.Fatalf("raw image: %s %v, want it unchanged", got, err)
	}
	if _, err := toRaw(context.Background(), raw, "vmdk", dir); err == nil || !strings.Contains(err.Error(), "not supported") {
		t.Fatalf("vmdk: %v", err)
	}
}

func TestNewRequiresConnAndRun(t *testing.T) {
	if _, err := New(Options{}); err == nil || !strings.Contains(err.Error(), "Conn") {
		t.Fatalf("New without Conn: %v", err)
	}
}
