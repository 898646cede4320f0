package redfish_test

import (
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/paritylab/paritylab/lab/redfish"
)

func TestSystemResource(t *testing.T) {
	f := newFixture(t)
	sys := f.system(t, 0)
	r := f.call(t, http.MethodGet, f.systemPath(0), "")
	expectStatus(t, r, http.StatusOK)
	for keys, want := range map[string]any{
		"Id":                                   sys.ID,
		"UUID":                                 sys.UUID,
		"Name":                                 "node-0",
		"PowerState":                           "Off",
		"Boot/BootSourceOverrideTarget":        "None",
		"Boot/BootSourceOverrideEnabled":       "Disabled",
		"Boot/BootSourceOverrideMode":          "UEFI",
		"ProcessorSummary/Count":               float64(2),
		"MemorySummary/TotalSystemMemoryGiB":   float64(4),
		"EthernetInterfaces/@odata.id":         f.systemPath(0) + "/EthernetInterfaces",
		"VirtualMedia/@odata.id":               f.systemPath(0) + "/VirtualMedia",
		"Actions/#ComputerSystem.Reset/target": f.systemPath(0) + "/Actions/ComputerSystem.Reset",
		"IndicatorLED":                         "Off",
	} {
		if got := get(r.body, strings.Split(keys, "/")...); got != want {
			t.Errorf("%s = %v, want %v", keys, got, want)
		}
	}
	targets := strings.Join(toStrings(get(r.body, "Boot", "BootSourceOverrideTarget@Redfish.AllowableValues")), ",")
	if targets != "None,Pxe,Cd,Hdd,UefiHttp" {
		t.Errorf("allowable targets %s", targets)
	}
	modes := toStrings(get(r.body, "Boot", "BootSourceOverrideMode@Redfish.AllowableValues"))
	if !slices.Equal(modes, []string{"UEFI", "Legacy"}) {
		t.Errorf("allowable modes %v", modes)
	}
	resets := toStrings(get(r.body, "Actions", "#ComputerSystem.Reset", "ResetType@Redfish.AllowableValues"))
	if len(resets) != len(redfish.ResetTypes) {
		t.Errorf("allowable reset types %v", resets)
	}
	if get(r.body, "Links", "ManagedBy") == nil || get(r.body, "Links", "Chassis") == nil {
		t.Errorf("no ManagedBy or Chassis links: %s", r.raw)
	}
}

func toStrings(v any) []string {
	list, _ := v.([]any)
	out := make([]string, 0, len(list))
	for _, x := range list {
		s, _ := x.(string)
		out = append(out, s)
	}
	return out
}

func TestManagerChassisAndNICs(t *testing.T) {
	f := newFixture(t)
	id := f.ids[1]
	r := f.call(t, http.MethodGet, "/redfish/v1/Managers/"+id, "")
	expectStatus(t, r, http.StatusOK)
	if r.body["Id"] != id || r.body["ManagerType"] != "BMC" || r.body["FirmwareVersion"] == "" {
		t.Fatalf("manager %s", r.raw)
	}
	if get(r.body, "VirtualMedia", "@odata.id") != f.systemPath(1)+"/VirtualMedia" {
		t.Fatalf("manager VirtualMedia link %v", get(r.body, "VirtualMedia"))
	}
	if servers, _ := get(r.body, "Links", "ManagerForServers").([]any); len(servers) != 1 {
		t.Fatalf("ManagerForServers %v", get(r.body, "Links"))
	}
	r = f.call(t, http.MethodGet, "/redfish/v1/Chassis/"+id, "")
	if r.status != http.StatusOK || r.body["Id"] != id {
		t.Fatalf("chassis %d %s", r.status, r.raw)
	}
	r = f.call(t, http.MethodGet, f.systemPath(1)+"/EthernetInterfaces/nic0", "")
	if r.status != http.StatusOK || r.body["MACAddress"] != "52:54:00:00:00:01" {
		t.Fatalf("nic %d %s", r.status, r.raw)
	}
	expectError(t, f.call(t, http.MethodGet, f.systemPath(1)+"/EthernetInterfaces/nic9", ""), http.StatusNotFound, "ResourceNotFound", "nic9")
	for _, coll := range []string{"/redfish/v1/Managers", "/redfish/v1/Chassis", "/redfish/v1/Systems"} {
		r = f.call(t, http.MethodGet, coll, "")
		if r.body["Members@odata.count"] != float64(2) {
			t.Fatalf("%s: %s", coll, r.raw)
		}
	}
}

func TestUnknownSystem(t *testing.T) {
	f := newFixture(t)
	for _, path := range []string{
		"/redfish/v1/Systems/nope",
		"/redfish/v1/Systems/nope/VirtualMedia/Cd",
		"/redfish/v1/Managers/nope",
		"/redfish/v1/Chassis/nope",
	} {
		expectError(t, f.call(t, http.MethodGet, path, ""), http.StatusNotFound, "ResourceNotFound", "nope")
	}
	expectError(t, f.call(t, http.MethodPost, "/redfish/v1/Systems/nope/Actions/ComputerSystem.Reset", `{"ResetType":"On"}`), http.StatusNotFound, "ResourceNotFound")
}

func TestNameAliasRedirects(t *testing.T) {
	f := newFixture(t)
	for _, c := range []struct{ method, path, body, want string }{
		{http.MethodGet, "/redfish/v1/Systems/node-0", "", f.systemPath(0)},
		{http.MethodPatch, "/redfish/v1/Systems/node-0", `{"IndicatorLED":"Lit"}`, f.systemPath(0)},
		{http.MethodPost, "/redfish/v1/Systems/node-1/Actions/ComputerSystem.Reset", `{"ResetType":"On"}`, f.systemPath(1) + "/Actions/ComputerSystem.Reset"},
		{http.MethodGet, "/redfish/v1/Systems/node-1/VirtualMedia/Cd?x=1", "", f.systemPath(1) + "/VirtualMedia/Cd?x=1"},
		{http.MethodGet, "/redfish/v1/Managers/node-1", "", "/redfish/v1/Managers/" + f.ids[1]},
	} {
		r := f.call(t, c.method, c.path, c.body)
		if r.status != http.StatusTemporaryRedirect || r.header.Get("Location") != c.want {
			t.Errorf("%s %s: HTTP %d Location %q, want 307 %s", c.method, c.path, r.status, r.header.Get("Location"), c.want)
		}
	}
	// A redirect changes nothing: the client repeats the request.
	if f.system(t, 1).PowerState != redfish.PowerOff {
		t.Fatal("the redirected Reset was performed")
	}
}

func TestPatchBoot(t *testing.T) {
	f := newFixture(t)
	path := f.systemPath(0)
	expectStatus(t, f.call(t, http.MethodPatch, path, `{"Boot":{"BootSourceOverrideMode":"Legacy"}}`), http.StatusNoContent)
	expectStatus(t, f.call(t, http.MethodPatch, path, `{"Boot":{"BootSourceOverrideTarget":"Cd","BootSourceOverrideEnabled":"Once"},"IndicatorLED":"Blinking"}`), http.StatusNoContent)
	want := redfish.Boot{Target: "Cd", Enabled: "Once", Mode: "Legacy"}
	if got := f.system(t, 0).Boot; got != want {
		t.Fatalf("boot %+v, want %+v", got, want)
	}
	if r := f.call(t, http.MethodGet, path, ""); r.body["IndicatorLED"] != "Blinking" {
		t.Fatalf("IndicatorLED %v", r.body["IndicatorLED"])
	}
}

func TestPatchErrors(t *testing.T) {
	f := newFixture(t)
	path := f.systemPath(0)
	for _, c := range []struct {
		body, id string
		mentions []string
	}{
		{`{"AssetTag":"x"}`, "PropertyUnknown", []string{"AssetTag", "Boot"}},
		{`{"PowerState":"On"}`, "PropertyNotWritable", []string{"PowerState"}},
		{`{"Boot":{"BootNext":"x"}}`, "PropertyUnknown", []string{"Boot/BootNext"}},
		{`{"Boot":"Cd"}`, "PropertyValueTypeError", []string{"Boot"}},
		{`{"Boot":{"BootSourceOverrideTarget":5}}`, "PropertyValueTypeError", []string{"BootSourceOverrideTarget"}},
		{`{"Boot":{"BootSourceOverrideTarget":"Floppy"}}`, "PropertyValueNotInList", []string{"Floppy", "Pxe"}},
		{`{"Boot":{"BootSourceOverrideEnabled":"Twice"}}`, "PropertyValueNotInList", []string{"Twice", "Once"}},
		{`{"Boot":{"BootSourceOverrideMode":"BIOS"}}`, "PropertyValueNotInList", []string{"BIOS", "UEFI"}},
		{`{"Boot":{"BootSourceOverrideMode":"Legacy","BootSourceOverrideTarget":"UefiHttp"}}`, "PropertyValueIncorrect", []string{"UefiHttp", "Legacy"}},
		{`{"IndicatorLED":"Disco"}`, "PropertyValueNotInList", []string{"Disco"}},
		{`{"Boot":{"BootSourceOverrideTarget":"Cd"},"IndicatorLED":"Disco"}`, "PropertyValueNotInList", nil},
		{`{}`, "EmptyJSON", []string{"Boot"}},
		{``, "EmptyJSON", nil},
		{`{"Boot":`, "MalformedJSON", nil},
		{`["Boot"]`, "MalformedJSON", []string{"object"}},
		{`null`, "MalformedJSON", nil},
	} {
		expectError(t, f.call(t, http.MethodPatch, path, c.body), http.StatusBadRequest, c.id, c.mentions...)
	}
	// A rejected PATCH changes nothing, not even its valid half.
	if got := f.system(t, 0).Boot; got.Target != "None" || got.Mode != "UEFI" {
		t.Fatalf("rejected PATCHes changed the boot override: %+v", got)
	}
}

func TestResetEveryType(t *testing.T) {
	f := newFixture(t)
	reset := f.systemPath(0) + "/Actions/ComputerSystem.Reset"
	for _, c := range []struct {
		rt    redfish.ResetType
		power string
	}{
		{redfish.ResetOn, "On"},
		{redfish.ResetNmi, "On"},
		{redfish.ResetGracefulRestart, "On"},
		{redfish.ResetForceRestart, "On"},
		{redfish.ResetGracefulShutdown, "Off"},
		{redfish.ResetForceOn, "On"},
		{redfish.ResetForceOff, "Off"},
		{redfish.ResetForceRestart, "On"},
		{redfish.ResetForceOff, "Off"},
	} {
		expectStatus(t, f.call(t, http.MethodPost, reset, `{"ResetType":"`+string(c.rt)+`"}`), http.StatusNoContent)
		if got := f.system(t, 0).PowerState; got != c.power {
			t.Fatalf("after %s: PowerState %s, want %s", c.rt, got, c.power)
		}
	}
	if n, _ := f.backend.NMIs(f.ids[0]); n != 1 {
		t.Fatalf("NMIs %d, want 1", n)
	}
}

func TestResetErrors(t *testing.T) {
	f := newFixture(t)
	reset := f.systemPath(0) + "/Actions/ComputerSystem.Reset"
	for _, c := range []struct {
		body     string
		status   int
		id       string
		mentions []string
	}{
		{`{"ResetType":"Explode"}`, 400, "ActionParameterNotSupported", []string{"Explode", "ForceOff"}},
		{`{"ResetType":"on"}`, 400, "ActionParameterNotSupported", nil},
		{`{}`, 400, "ActionParameterMissing", []string{"ResetType"}},
		{``, 400, "ActionParameterMissing", nil},
		{`{"ResetType":1}`, 400, "ActionParameterValueTypeError", []string{"ResetType"}},
		{`{"ResetType":"On","Delay":5}`, 400, "ActionParameterUnknown", []string{"Delay"}},
		{`{"ResetType":"On"`, 400, "MalformedJSON", nil},
		// Off: an NMI or a graceful restart needs a running OS.
		{`{"ResetType":"Nmi"}`, 409, "ResourceInStandby", []string{"Off"}},
		{`{"ResetType":"GracefulRestart"}`, 409, "ResourceInStandby", []string{"Off"}},
	} {
		expectError(t, f.call(t, http.MethodPost, reset, c.body), c.status, c.id, c.mentions...)
	}
	if f.system(t, 0).PowerState != redfish.PowerOff {
		t.Fatal("a rejected reset changed the power state")
	}
}

// TestOnceOverrideIsSpentByOneBoot checks the Once semantics end to end:
// the next power-on boots the target and sets the override back to
// Disabled; the boot after that uses the disk.
func TestOnceOverrideIsSpentByOneBoot(t *testing.T) {
	f := newFixture(t)
	path := f.systemPath(0)
	reset := path + "/Actions/ComputerSystem.Reset"
	expectStatus(t, f.call(t, http.MethodPatch, path, `{"Boot":{"BootSourceOverrideTarget":"Cd","BootSourceOverrideEnabled":"Once"}}`), http.StatusNoContent)
	expectStatus(t, f.call(t, http.MethodPost, reset, `{"ResetType":"On"}`), http.StatusNoContent)
	r := f.call(t, http.MethodGet, path, "")
	if get(r.body, "Boot", "BootSourceOverrideEnabled") != "Disabled" {
		t.Fatalf("after power on the override is %v, want Disabled", get(r.body, "Boot"))
	}
	expectStatus(t, f.call(t, http.MethodPost, reset, `{"ResetType":"ForceRestart"}`), http.StatusNoContent)
	history, err := f.backend.BootHistory(f.ids[0])
	if err != nil || !slices.Equal(history, []string{"Cd", "Hdd"}) {
		t.Fatalf("boot history %v (%v), want [Cd Hdd]", history, err)
	}
}
