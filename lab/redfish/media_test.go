package redfish_test

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/paritylab/paritylab/lab/redfish"
	"github.com/paritylab/paritylab/lab/redfish/redfishtest"
)

func TestVirtualMediaResources(t *testing.T) {
	f := newFixture(t)
	r := f.call(t, http.MethodGet, f.systemPath(0)+"/VirtualMedia", "")
	expectStatus(t, r, http.StatusOK)
	if get(r.body, "Members@odata.count") != float64(2) {
		t.Fatalf("collection %s", r.raw)
	}
	for dev, types := range map[string][]string{"Cd": {"CD", "DVD"}, "Floppy": {"Floppy", "USBStick"}} {
		r = f.call(t, http.MethodGet, f.systemPath(0)+"/VirtualMedia/"+dev, "")
		expectStatus(t, r, http.StatusOK)
		if !slices.Equal(toStrings(r.body["MediaTypes"]), types) || r.body["Inserted"] != false || r.body["ConnectedVia"] != "NotConnected" {
			t.Fatalf("%s: %s", dev, r.raw)
		}
		for _, action := range []string{"#VirtualMedia.InsertMedia", "#VirtualMedia.EjectMedia"} {
			if s, _ := get(r.body, "Actions", action, "target").(string); s == "" {
				t.Fatalf("%s: no %s target", dev, action)
			}
		}
	}
	expectError(t, f.call(t, http.MethodGet, f.systemPath(0)+"/VirtualMedia/Usb", ""), http.StatusNotFound, "ResourceNotFound", "Usb")
}

func TestInsertAndEjectMedia(t *testing.T) {
	f := newFixture(t)
	content := []byte("an ISO image, or so")
	image := redfishtest.ServeImage(t, "boot-node-0.iso", content)
	cd := f.systemPath(0) + "/VirtualMedia/Cd"

	expectStatus(t, f.call(t, http.MethodPost, cd+"/Actions/VirtualMedia.InsertMedia", `{"Image":"`+image+`"}`), http.StatusNoContent)
	r := f.call(t, http.MethodGet, cd, "")
	if r.body["Inserted"] != true || r.body["Image"] != image || r.body["ImageName"] != "boot-node-0.iso" ||
		r.body["ConnectedVia"] != "URI" || r.body["WriteProtected"] != true {
		t.Fatalf("after insert: %s", r.raw)
	}
	attached, inserted, err := f.backend.Attached(f.ids[0], "Cd")
	if err != nil || !inserted || filepath.Dir(attached.Path) != f.imageDir || !attached.WriteProtected {
		t.Fatalf("backend got %+v inserted=%v (%v), want a write-protected file in %s", attached, inserted, err, f.imageDir)
	}
	if got, err := os.ReadFile(attached.Path); err != nil || !bytes.Equal(got, content) {
		t.Fatalf("downloaded image %q (%v), want %q", got, err, content)
	}

	expectError(t, f.call(t, http.MethodPost, cd+"/Actions/VirtualMedia.InsertMedia", `{"Image":"`+image+`"}`), http.StatusConflict, "ResourceInUse", "eject")

	// Eject with no body and no Content-Type, as Ironic sends it.
	r = f.send(t, http.MethodPost, cd+"/Actions/VirtualMedia.EjectMedia", "", func(r *http.Request) { r.SetBasicAuth(testUser, testPassword) })
	expectStatus(t, r, http.StatusNoContent)
	if _, err := os.Stat(attached.Path); !os.IsNotExist(err) {
		t.Fatalf("image file still there after eject: %v", err)
	}
	if r = f.call(t, http.MethodGet, cd, ""); r.body["Inserted"] != false || r.body["Image"] != "" {
		t.Fatalf("after eject: %s", r.raw)
	}
	// Ejecting an empty device, with {}, is fine too.
	expectStatus(t, f.call(t, http.MethodPost, cd+"/Actions/VirtualMedia.EjectMedia", `{}`), http.StatusNoContent)
	expectError(t, f.call(t, http.MethodPost, cd+"/Actions/VirtualMedia.EjectMedia", `{"Force":true}`), http.StatusBadRequest, "ActionParameterUnknown", "Force")
	if entries, _ := os.ReadDir(f.imageDir); len(entries) != 0 {
		t.Fatalf("image dir not empty after eject: %v", entries)
	}
}

func TestInsertMediaErrors(t *testing.T) {
	f := newFixture(t)
	image := redfishtest.ServeImage(t, "boot.iso", []byte("x"))
	insert := f.systemPath(0) + "/VirtualMedia/Cd/Actions/VirtualMedia.InsertMedia"
	for _, c := range []struct {
		body, id string
		mentions []string
	}{
		{`{"Image":"http://192.0.2.1/boot.iso"}`, "ActionParameterValueError", []string{"192.0.2.1", "loopback"}},
		{`{"Image":"http://[2001:db8::1]/boot.iso"}`, "ActionParameterValueError", []string{"loopback"}},
		{`{"Image":"http://localhost/boot.iso"}`, "ActionParameterValueError", []string{"not an IP"}},
		{`{"Image":"ftp://127.0.0.1/boot.iso"}`, "ActionParameterValueError", []string{"ftp"}},
		{`{"Image":"::"}`, "ActionParameterValueError", []string{"Image"}},
		{`{}`, "ActionParameterMissing", []string{"Image"}},
		{`{"Image":5}`, "ActionParameterValueTypeError", []string{"Image"}},
		{`{"Image":"` + image + `","Inserted":"yes"}`, "ActionParameterValueTypeError", []string{"Inserted"}},
		{`{"Image":"` + image + `","Inserted":false}`, "ActionParameterValueError", []string{"Inserted"}},
		{`{"Image":"` + image + `","UserName":"u"}`, "ActionParameterMissing", []string{"Password"}},
		{`{"Image":"` + image + `","Password":"p"}`, "ActionParameterMissing", []string{"UserName"}},
		{`{"Image":"` + image + `","TransferProtocolType":"HTTPS"}`, "ActionParameterValueError", []string{"TransferProtocolType"}},
		{`{"Image":"` + image + `","TransferProtocolType":"NFS"}`, "ActionParameterValueError", []string{"NFS"}},
		{`{"Image":"` + image + `","TransferMethod":"Carrier pigeon"}`, "ActionParameterNotSupported", []string{"TransferMethod"}},
		{`{"Image":"` + image + `","MediaType":"Floppy"}`, "ActionParameterNotSupported", []string{"MediaType"}},
		{`{"Image":"` + image + `","Force":true}`, "ActionParameterUnknown", []string{"Force"}},
		{`{"Image":"` + image + `x"}`, "ResourceMissingAtURI", []string{"404"}},
		{`{"Image":"http://127.0.0.1:1/boot.iso"}`, "CouldNotEstablishConnection", []string{"127.0.0.1:1"}},
	} {
		expectError(t, f.call(t, http.MethodPost, insert, c.body), http.StatusBadRequest, c.id, c.mentions...)
	}
	if _, inserted, _ := f.backend.Attached(f.ids[0], "Cd"); inserted {
		t.Fatal("a rejected insert attached media")
	}
	expectError(t, f.call(t, http.MethodPost, f.systemPath(0)+"/VirtualMedia/Usb/Actions/VirtualMedia.InsertMedia", `{"Image":"`+image+`"}`), http.StatusNotFound, "ResourceNotFound")
	if entries, _ := os.ReadDir(f.imageDir); len(entries) != 0 {
		t.Fatalf("rejected inserts left files: %v", entries)
	}
}

func TestInsertMediaWithCredentials(t *testing.T) {
	f := newFixture(t)
	img := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if u, p, ok := r.BasicAuth(); !ok || u != "img" || p != "pw" {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		_, _ = w.Write([]byte("secret image"))
	}))
	t.Cleanup(img.Close)
	insert := f.systemPath(0) + "/VirtualMedia/Cd/Actions/VirtualMedia.InsertMedia"
	expectError(t, f.call(t, http.MethodPost, insert, `{"Image":"`+img.URL+`/a.img"}`), http.StatusBadRequest, "ResourceAtUriUnauthorized", "UserName")
	expectStatus(t, f.call(t, http.MethodPost, insert, `{"Image":"`+img.URL+`/a.img","UserName":"img","Password":"pw","TransferProtocolType":"HTTP","TransferMethod":"Stream","WriteProtected":false}`), http.StatusNoContent)
	attached, _, _ := f.backend.Attached(f.ids[0], "Cd")
	if filepath.Ext(attached.Path) != ".img" || attached.WriteProtected {
		t.Fatalf("attached %+v, want a writable .img file", attached)
	}
}

// TestInsertMediaRedirectStaysOnLoopback: an image server on loopback must
// not be able to send the emulator elsewhere.
func TestInsertMediaRedirectStaysOnLoopback(t *testing.T) {
	f := newFixture(t)
	img := httptest.NewServer(http.RedirectHandler("http://192.0.2.1/boot.iso", http.StatusFound))
	t.Cleanup(img.Close)
	r := f.call(t, http.MethodPost, f.systemPath(0)+"/VirtualMedia/Cd/Actions/VirtualMedia.InsertMedia", `{"Image":"`+img.URL+`/boot.iso"}`)
	expectError(t, r, http.StatusBadRequest, "CouldNotEstablishConnection", "loopback")
}

func TestInsertMediaSizeLimit(t *testing.T) {
	f := newFixture(t, func(o *redfish.Options) { o.MaxImageBytes = 10 })
	image := redfishtest.ServeImage(t, "big.iso", make([]byte, 11))
	r := f.call(t, http.MethodPost, f.systemPath(0)+"/VirtualMedia/Cd/Actions/VirtualMedia.InsertMedia", `{"Image":"`+image+`"}`)
	expectError(t, r, http.StatusBadRequest, "ActionParameterValueError", "limit")
	if entries, _ := os.ReadDir(f.imageDir); len(entries) != 0 {
		t.Fatalf("oversized download left files: %v", entries)
	}
}
