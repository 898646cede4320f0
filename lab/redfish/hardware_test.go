package redfish_test

import (
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/paritylab/paritylab/lab/redfish/memory"
)

func TestSystemLinksProcessorsAndStorage(t *testing.T) {
	f := newFixture(t)
	r := f.call(t, http.MethodGet, f.systemPath(0), "")
	expectStatus(t, r, http.StatusOK)
	for _, name := range []string{"Processors", "Storage", "SimpleStorage"} {
		if got := get(r.body, name, "@odata.id"); got != f.systemPath(0)+"/"+name {
			t.Errorf("%s link %v, want %s/%s", name, got, f.systemPath(0), name)
		}
	}
	expectError(t, f.call(t, http.MethodPatch, f.systemPath(0), `{"Processors":{}}`), http.StatusBadRequest, "PropertyNotWritable", "Processors")
}

// The collection has one processor per CPU the summary counts, each with
// one thread, so that sushy's count (the sum of TotalThreads) agrees.
func TestProcessorsOfADefaultSystem(t *testing.T) {
	f := newFixture(t)
	path := f.systemPath(0) + "/Processors"
	r := f.call(t, http.MethodGet, path, "")
	expectStatus(t, r, http.StatusOK)
	members := toLinks(r.body["Members"])
	if r.body["Members@odata.count"] != float64(memory.DefaultCPUs) || len(members) != memory.DefaultCPUs {
		t.Fatalf("collection %s, want %d members", r.raw, memory.DefaultCPUs)
	}
	for i, m := range members {
		want := path + "/CPU" + strconv.Itoa(i)
		if m != want {
			t.Fatalf("member %d %s, want %s", i, m, want)
		}
		p := f.call(t, http.MethodGet, m, "")
		expectStatus(t, p, http.StatusOK)
		for key, v := range map[string]any{
			"@odata.id": m, "Id": "CPU" + strconv.Itoa(i), "ProcessorType": "CPU",
			"ProcessorArchitecture": "x86", "InstructionSet": "x86-64",
			"TotalCores": float64(1), "TotalThreads": float64(1), "Status/State": "Enabled",
		} {
			if got := get(p.body, strings.Split(key, "/")...); got != v {
				t.Errorf("%s: %s = %v, want %v", m, key, got, v)
			}
		}
		if _, ok := p.body["Model"]; ok {
			t.Errorf("%s: Model %v, but the system has none", m, p.body["Model"])
		}
	}
	for _, id := range []string{"CPU2", "CPU01", "cpu0", "0"} {
		expectError(t, f.call(t, http.MethodGet, path+"/"+id, ""), http.StatusNotFound, "ResourceNotFound", "Processor", id)
	}
}

func TestProcessorArchAndModelFromTheSpec(t *testing.T) {
	f := newFixtureOf(t, []memory.SystemSpec{{Name: "arm", CPUs: 3, Arch: "aarch64", CPUModel: "Neoverse-N1"}})
	r := f.call(t, http.MethodGet, f.systemPath(0)+"/Processors/CPU2", "")
	expectStatus(t, r, http.StatusOK)
	if r.body["ProcessorArchitecture"] != "ARM" || r.body["InstructionSet"] != "ARM-A64" || r.body["Model"] != "Neoverse-N1" {
		t.Fatalf("processor %s: want ARM, ARM-A64, Neoverse-N1", r.raw)
	}
	if s := f.call(t, http.MethodGet, f.systemPath(0), ""); get(s.body, "ProcessorSummary", "Count") != float64(3) {
		t.Fatalf("ProcessorSummary %v, want Count 3", s.body["ProcessorSummary"])
	}
}

// Disks appear under Storage (with Drives) and SimpleStorage (with
// Devices), both with one member per bus.
func TestStorageAndDrives(t *testing.T) {
	f := newFixtureOf(t, []memory.SystemSpec{{Name: "two-disks", Disks: []memory.DiskSpec{{SizeGiB: 120}, {SizeGiB: 10, SSD: true}}}})
	sys := f.systemPath(0)
	r := f.call(t, http.MethodGet, sys+"/Storage", "")
	expectStatus(t, r, http.StatusOK)
	if m := toLinks(r.body["Members"]); len(m) != 1 || m[0] != sys+"/Storage/virtio" {
		t.Fatalf("storage collection %s, want one member, virtio", r.raw)
	}
	r = f.call(t, http.MethodGet, sys+"/Storage/virtio", "")
	expectStatus(t, r, http.StatusOK)
	drives := toLinks(r.body["Drives"])
	if len(drives) != 2 || drives[0] != sys+"/Storage/virtio/Drives/vda" || drives[1] != sys+"/Storage/virtio/Drives/vdb" {
		t.Fatalf("storage %s, want drives vda and vdb", r.raw)
	}
	for i, want := range []map[string]any{
		{"Id": "vda", "Name": "vda", "CapacityBytes": float64(120 << 30), "MediaType": "HDD", "Protocol": "PCIe"},
		{"Id": "vdb", "Name": "vdb", "CapacityBytes": float64(10 << 30), "MediaType": "SSD", "Protocol": "PCIe"},
	} {
		d := f.call(t, http.MethodGet, drives[i], "")
		expectStatus(t, d, http.StatusOK)
		for k, v := range want {
			if d.body[k] != v {
				t.Errorf("%s: %s = %v, want %v", drives[i], k, d.body[k], v)
			}
		}
		if get(d.body, "Status", "State") != "Enabled" || d.body["@odata.id"] != drives[i] {
			t.Errorf("%s: %s", drives[i], d.raw)
		}
	}
	r = f.call(t, http.MethodGet, sys+"/SimpleStorage/virtio", "")
	expectStatus(t, r, http.StatusOK)
	devices, _ := r.body["Devices"].([]any)
	if len(devices) != 2 || get(devices[0].(map[string]any), "CapacityBytes") != float64(120<<30) ||
		get(devices[1].(map[string]any), "CapacityBytes") != float64(10<<30) {
		t.Fatalf("simple storage %s, want devices of 120 and 10 GiB", r.raw)
	}
	if m := toLinks(f.call(t, http.MethodGet, sys+"/SimpleStorage", "").body["Members"]); len(m) != 1 || m[0] != sys+"/SimpleStorage/virtio" {
		t.Fatalf("simple storage members %v", m)
	}
}

func TestUnknownStorageAndDrives(t *testing.T) {
	f := newFixture(t)
	sys := f.systemPath(0)
	for _, c := range []struct{ path, kind, id string }{
		{sys + "/Storage/sata", "Storage", "sata"},
		{sys + "/Storage/sata/Drives/vda", "Storage", "sata"},
		{sys + "/Storage/virtio/Drives/vdb", "Drive", "vdb"},
		{sys + "/SimpleStorage/sata", "SimpleStorage", "sata"},
	} {
		expectError(t, f.call(t, http.MethodGet, c.path, ""), http.StatusNotFound, "ResourceNotFound", c.kind, c.id)
	}
	// Names work here as everywhere under a system.
	r := f.call(t, http.MethodGet, "/redfish/v1/Systems/node-0/Storage/virtio/Drives/vda", "")
	if r.status != http.StatusTemporaryRedirect || r.header.Get("Location") != sys+"/Storage/virtio/Drives/vda" {
		t.Fatalf("alias: HTTP %d Location %q", r.status, r.header.Get("Location"))
	}
}

// toLinks returns the @odata.id of each member of a list of links.
func toLinks(v any) []string {
	list, _ := v.([]any)
	out := make([]string, 0, len(list))
	for _, x := range list {
		m, _ := x.(map[string]any)
		s, _ := m["@odata.id"].(string)
		out = append(out, s)
	}
	return out
}
