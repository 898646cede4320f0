package redfish_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

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

// conformanceOperations is the operation log of the conformance sequence
// (the first boot PATCH sets the mode alone); its bad requests add
// nothing.
var conformanceOperations = []string{
	"power:ForceOff", "media:eject", "media:insert", "boot:None/Disabled", "boot:Cd/Once", "power:On",
	"power:ForceOff", "media:eject", "boot:Hdd/Continuous", "power:On", "power:ForceOff",
}

// checkAfterSequence checks what the boot sequence did to the system, as a
// real machine would have lived it: booted the CD once, then the disk; and
// that the operation log holds what the client had carried out.
func checkAfterSequence(t *testing.T, srv *redfish.Server, backend *memory.Backend, id string) {
	t.Helper()
	ops, err := srv.Operations(context.Background(), id, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	expectOperations(t, ops, conformanceOperations...)
	history, err := backend.BootHistory(id)
	if err != nil || !slices.Equal(history, []string{redfish.BootTargetCd, redfish.BootTargetHdd}) {
		t.Fatalf("boot history %v (%v), want [Cd Hdd]", history, err)
	}
	if _, inserted, _ := backend.Attached(id, redfish.DeviceCd); inserted {
		t.Fatal("CD still inserted after the sequence")
	}
}

// defaultHardware is what a memory system reports by default: x86_64
// processors and one 120 GiB disk.
var defaultHardware = &redfishtest.Hardware{InstructionSet: "x86-64", DiskBytes: []int64{memory.DefaultDiskGiB << 30}}

func TestSushyConformance(t *testing.T) {
	srv, backend, ids := listening(t)
	redfishtest.RunSushyConformance(t, redfishtest.Target{URL: srv.URL(), SystemID: ids[1], User: testUser, Password: testPassword, Hardware: defaultHardware})
	checkAfterSequence(t, srv, backend, ids[1])
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
	redfishtest.RunGofishConformance(t, redfishtest.Target{URL: srv.URL(), SystemID: ids[0], User: testUser, Password: testPassword, CAFile: caFile, Hardware: defaultHardware})
	checkAfterSequence(t, srv, backend, ids[0])
}
