package redfish_test

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/paritylab/paritylab/lab/pki"
	"github.com/paritylab/paritylab/lab/redfish"
	"github.com/paritylab/paritylab/lab/redfish/memory"
	"github.com/paritylab/paritylab/lab/redfish/redfishtest"
)

// listening starts a server over a memory backend on a loopback port.
func listening(t *testing.T, mutate ...func(*redfish.Options)) (*redfish.Server, *memory.Backend, []string) {
	t.Helper()
	f := newFixture(t, mutate...)
	if err := f.srv.Start(); err != nil {
		t.Fatal(err)
	}
	return f.srv, f.backend, f.ids
}

// checkAfterSequence checks what the boot sequence did to the system, as a
// real machine would have lived it: booted the CD once, then the disk.
func checkAfterSequence(t *testing.T, backend *memory.Backend, id string) {
	t.Helper()
	history, err := backend.BootHistory(id)
	if err != nil || !slices.Equal(history, []string{redfish.BootTargetCd, redfish.BootTargetHdd}) {
		t.Fatalf("boot history %v (%v), want [Cd Hdd]", history, err)
	}
	if _, inserted, _ := backend.Attached(id, redfish.DeviceCd); inserted {
		t.Fatal("CD still inserted after the sequence")
	}
}

func TestSushyConformance(t *testing.T) {
	srv, backend, ids := listening(t)
	redfishtest.RunSushyConformance(t, redfishtest.Target{URL: srv.URL(), SystemID: ids[1], User: testUser, Password: testPassword})
	checkAfterSequence(t, backend, ids[1])
}

// TestGofishConformance runs over HTTPS, to cover the TLS options with a
// real client.
func TestGofishConformance(t *testing.T) {
	dir := t.TempDir()
	ca, err := pki.NewCA("redfish test CA")
	if err != nil {
		t.Fatal(err)
	}
	pair, err := ca.ServingCert("redfish", "127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	cert, key, caFile := filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key"), filepath.Join(dir, "ca.crt")
	if err := pair.WriteFiles(cert, key); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(caFile, ca.CertPEM(), 0o600); err != nil {
		t.Fatal(err)
	}
	srv, backend, ids := listening(t, func(o *redfish.Options) { o.TLSCertFile, o.TLSKeyFile = cert, key })
	redfishtest.RunGofishConformance(t, redfishtest.Target{URL: srv.URL(), SystemID: ids[0], User: testUser, Password: testPassword, CAFile: caFile})
	checkAfterSequence(t, backend, ids[0])
}
