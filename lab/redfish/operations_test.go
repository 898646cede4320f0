package redfish_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stmcginnis/gofish"
	"github.com/stmcginnis/gofish/common"
	gfredfish "github.com/stmcginnis/gofish/redfish"

	"github.com/paritylab/paritylab/lab/redfish"
	"github.com/paritylab/paritylab/lab/redfish/redfishtest"
)

func operationsPath(system string) string { return "/paritylab/v1/systems/" + system + "/operations" }

// TestOperationsGofish drives a listening emulator with gofish, mixing
// requests it carries out with requests it refuses, and reads the log back
// over HTTP: exactly the carried-out ones, in order.
func TestOperationsGofish(t *testing.T) {
	srv, backend, ids := listening(t)
	c, err := gofish.Connect(gofish.ClientConfig{Endpoint: srv.URL(), Username: testUser, Password: testPassword, Insecure: true})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Logout()
	sys, err := gfredfish.GetComputerSystem(c, "/redfish/v1/Systems/"+ids[0])
	if err != nil {
		t.Fatal(err)
	}
	d := &driver{t: t, srv: srv, c: c, sys: sys, id: ids[0]}
	d.run()
	if got, _ := backend.System(context.Background(), ids[0]); got.PowerState != redfish.PowerOff {
		t.Fatalf("PowerState %s: a refused or ignored restart powered the system on", got.PowerState)
	}

	ops := fetchOps(t, srv, ids[0], time.Time{})
	want := []string{"power:On", "power:ForceOff", "boot:Cd/Once", "media:insert", "media:eject"}
	expectOperations(t, ops, want...)
	checkSince(t, srv, ids[0], ops)
	// The Go API resolves the name as the admin routes do, and agrees.
	byName, err := srv.Operations(context.Background(), "node-0", time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	expectSameOperations(t, byName, ops)
	if other := fetchOps(t, srv, ids[1], time.Time{}); len(other) != 0 {
		t.Fatalf("node-1 has operations %v; only node-0 was driven", other)
	}
}

// driver runs the gofish sequence, with a refused request between each
// two carried-out ones.
type driver struct {
	t   *testing.T
	srv *redfish.Server
	c   *gofish.APIClient
	sys *gfredfish.ComputerSystem
	id  string
}

func (d *driver) run() {
	reset := "/redfish/v1/Systems/" + d.id + "/Actions/ComputerSystem.Reset"
	d.ok("reset On", d.sys.Reset(gfredfish.OnResetType))
	d.refused("unknown ResetType", http.StatusBadRequest, d.post(reset, map[string]string{"ResetType": "Explode"}))
	d.ok("reset ForceOff", d.sys.Reset(gfredfish.ForceOffResetType))
	d.refused("GracefulRestart of an Off system (backend)", http.StatusConflict, d.sys.Reset(gfredfish.GracefulRestartResetType))
	d.fault(redfish.Fault{Status: http.StatusServiceUnavailable, Count: 1})
	d.refused("restart under a 503 fault", http.StatusServiceUnavailable, d.sys.Reset(gfredfish.ForceRestartResetType))
	// Acknowledged, not carried out: not in the log either.
	d.fault(redfish.Fault{IgnorePower: true, Count: 1})
	d.ok("restart under an IgnorePower fault", d.sys.Reset(gfredfish.ForceRestartResetType))
	d.ok("boot Cd once", d.sys.SetBoot(gfredfish.Boot{BootSourceOverrideTarget: gfredfish.CdBootSourceOverrideTarget, BootSourceOverrideEnabled: gfredfish.OnceBootSourceOverrideEnabled}))
	d.refused("boot Floppy", http.StatusBadRequest, d.sys.SetBoot(gfredfish.Boot{BootSourceOverrideTarget: gfredfish.FloppyBootSourceOverrideTarget}))
	cd := d.cd()
	image := redfishtest.ServeImage(d.t, "ops.iso", []byte("CD001 operations test image"))
	d.refused("insert a non-loopback image", http.StatusBadRequest, cd.InsertMedia("http://192.0.2.1/boot.iso", true, true))
	d.ok("insert", cd.InsertMedia(image, true, true))
	d.refused("insert over inserted media", http.StatusConflict, cd.InsertMedia(image, true, true))
	d.refused("eject without credentials", http.StatusUnauthorized, d.anonymousEject(cd))
	d.ok("eject", cd.EjectMedia())
}

func (d *driver) ok(what string, err error) {
	d.t.Helper()
	if err != nil {
		d.t.Fatalf("%s: %v", what, err)
	}
}

// refused checks that a request failed with a Redfish error of the
// status.
func (d *driver) refused(what string, status int, err error) {
	d.t.Helper()
	var ge *common.Error
	if !errors.As(err, &ge) || ge.HTTPReturnedStatusCode != status {
		d.t.Fatalf("%s: got %v, want a Redfish error of HTTP %d", what, err, status)
	}
}

func (d *driver) post(path string, body any) error {
	resp, err := d.c.Post(path, body)
	if err == nil {
		resp.Body.Close()
	}
	return err
}

func (d *driver) fault(f redfish.Fault) {
	d.t.Helper()
	if err := d.srv.SetFault(context.Background(), d.id, f); err != nil {
		d.t.Fatal(err)
	}
}

func (d *driver) cd() *gfredfish.VirtualMedia {
	d.t.Helper()
	media, err := d.sys.VirtualMedia()
	if err != nil {
		d.t.Fatal(err)
	}
	for _, m := range media {
		if m.ID == redfish.DeviceCd {
			return m
		}
	}
	d.t.Fatalf("no Cd among %d virtual media", len(media))
	return nil
}

// anonymousEject posts an eject without credentials and returns the
// answer as gofish would.
func (d *driver) anonymousEject(cd *gfredfish.VirtualMedia) error {
	req, err := http.NewRequestWithContext(context.Background(), http.MethodPost,
		d.srv.URL()+cd.ODataID+"/Actions/VirtualMedia.EjectMedia", strings.NewReader("{}"))
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode >= 400 {
		body, _ := io.ReadAll(resp.Body)
		return common.ConstructError(resp.StatusCode, body)
	}
	return nil
}

// fetchOps reads a system's log with the client other packages use.
func fetchOps(t *testing.T, srv *redfish.Server, system string, since time.Time) []redfish.Operation {
	t.Helper()
	ops, err := redfish.FetchOperations(context.Background(), redfish.FetchOperationsInput{
		URL: srv.URL(), SystemID: system, Username: testUser, Password: testPassword, Since: since,
	})
	if err != nil {
		t.Fatal(err)
	}
	return ops
}

// expectOperations checks the operations, in order, and that their times
// never decrease.
func expectOperations(t testing.TB, ops []redfish.Operation, want ...string) {
	t.Helper()
	got := make([]string, len(ops))
	for i, o := range ops {
		got[i] = o.Operation
		if o.At.IsZero() || i > 0 && o.At.Before(ops[i-1].At) {
			t.Fatalf("operation %d %s at %s is zero or earlier than the one before (%s)", i, o.Operation, o.At, ops[i-1].At)
		}
	}
	if !slices.Equal(got, want) {
		t.Fatalf("operations %v, want %v", got, want)
	}
}

func expectSameOperations(t *testing.T, got, want []redfish.Operation) {
	t.Helper()
	same := slices.EqualFunc(got, want, func(a, b redfish.Operation) bool {
		return a.Operation == b.Operation && a.At.Equal(b.At)
	})
	if !same {
		t.Fatalf("operations %v, want %v", got, want)
	}
}

// checkSince filters by the time of an operation in the middle, and by
// one past the last: the answer is what a filter of the whole log gives.
func checkSince(t *testing.T, srv *redfish.Server, system string, all []redfish.Operation) {
	t.Helper()
	since := all[2].At
	var want []redfish.Operation
	for _, o := range all {
		if !o.At.Before(since) {
			want = append(want, o)
		}
	}
	got := fetchOps(t, srv, system, since)
	expectSameOperations(t, got, want)
	if len(got) < len(all)-2 {
		t.Fatalf("since the third operation: %v, want at least the last %d", got, len(all)-2)
	}
	if late := fetchOps(t, srv, system, all[len(all)-1].At.Add(time.Nanosecond)); len(late) != 0 {
		t.Fatalf("since after the last operation: %v, want none", late)
	}
}
