package libvirt

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stmcginnis/gofish"
	gfredfish "github.com/stmcginnis/gofish/redfish"

	"github.com/paritylab/paritylab/lab/images"
	"github.com/paritylab/paritylab/lab/machines"
)

// A host installed to disk boots it again after a Redfish power cycle, as
// a server does after a power cut: the default boot order starts with the
// disk and nothing of the first boot lingers in the domain.
func TestPowerCycleBootsTheDiskAgain(t *testing.T) {
	b := newBMC(t, "pl-cycle", "host-0")
	h, _ := b.manager.Host("host-0")
	store, err := images.Open(images.StoreOptions{})
	if err != nil {
		t.Fatal(err)
	}
	marker := images.MarkerSpec{Marker: "disk-cycle"}
	iso, err := store.MarkerISO(marker)
	if err != nil {
		t.Fatal(err)
	}
	if err := machines.WriteImage(b.conn, h, iso); err != nil {
		t.Fatal(err)
	}
	c, err := gofish.Connect(gofish.ClientConfig{Endpoint: b.server.URL(), Username: b.user, Password: b.pass, BasicAuth: true})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Logout()
	sys, err := gfredfish.GetComputerSystem(c, "/redfish/v1/Systems/"+h.UUID)
	if err != nil {
		t.Fatal(err)
	}
	for boot := 1; boot <= 2; boot++ {
		if err := sys.Reset(gfredfish.OnResetType); err != nil {
			t.Fatalf("power on %d: %v", boot, err)
		}
		if !waitFor(90*time.Second, func() bool { return markerCount(h.SerialLog, marker.Line()) == boot }) {
			raw, _ := os.ReadFile(h.SerialLog)
			t.Fatalf("boot %d: no marker from the disk; serial log:\n%s", boot, raw)
		}
		if err := sys.Reset(gfredfish.ForceOffResetType); err != nil {
			t.Fatalf("power off %d: %v", boot, err)
		}
	}
}

func markerCount(path, line string) int {
	raw, _ := os.ReadFile(path)
	return strings.Count(string(raw), line)
}
