package redfishtest

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/crypto/bcrypt"
)

// Target is a Redfish service and the system to drive on it. The run
// changes the system's power, boot override and CD, and leaves it Off with
// an empty CD and a continuous Hdd override.
type Target struct {
	// URL is the service's base URL, scheme://host:port, without a path.
	URL string
	// SystemID is the Id of the system to drive.
	SystemID string
	// User and Password are credentials the service accepts.
	User     string
	Password string
	// ImageURL is the image to insert; it must be on a loopback host.
	// Default: an image served for the test on 127.0.0.1.
	ImageURL string
	// CAFile verifies an https service; empty means no verification.
	CAFile string
	// Hardware, when set, is what the system's Processors and Storage
	// must report. Without it the runs still check that each resource
	// agrees with the others (see Hardware).
	Hardware *Hardware
}

func (tg Target) withDefaults(t testing.TB) Target {
	t.Helper()
	if tg.URL == "" || tg.SystemID == "" {
		t.Fatalf("redfishtest: Target needs URL and SystemID, got %+v", tg)
	}
	tg.URL = strings.TrimSuffix(tg.URL, "/")
	if tg.ImageURL == "" {
		tg.ImageURL = ServeImage(t, "boot-conformance.iso", ImageContent)
	}
	return tg
}

// ImageContent is the default image: not a bootable ISO, but the bytes of
// a plausible one, large enough to take more than one read to download.
var ImageContent = append([]byte("CD001 paritylab redfish conformance image\n"), make([]byte, 256<<10)...)

// ServeImage serves content at /name from an HTTP server on 127.0.0.1 for
// the duration of the test and returns its URL.
func ServeImage(t testing.TB, name string, content []byte) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/"+name {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/octet-stream")
		_, _ = w.Write(content)
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/" + name
}

// WriteHtpasswd writes an htpasswd file with bcrypt hashes (at the lowest
// cost, to keep tests fast) into the test's temporary directory.
func WriteHtpasswd(t testing.TB, users map[string]string) string {
	t.Helper()
	var b strings.Builder
	for user, pass := range users {
		hash, err := bcrypt.GenerateFromPassword([]byte(pass), bcrypt.MinCost)
		if err != nil {
			t.Fatalf("hash password: %v", err)
		}
		b.WriteString(user + ":" + string(hash) + "\n")
	}
	path := filepath.Join(t.TempDir(), "htpasswd")
	if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
		t.Fatalf("write htpasswd: %v", err)
	}
	return path
}
