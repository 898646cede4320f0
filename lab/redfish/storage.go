package redfish

import (
	"net/http"
)

// A system's disks are served twice, as a server's BMC does: as Storage
// (one per controller, with Drives), which gofish and the lab's bare-metal
// operator read, and as SimpleStorage (one per controller, with Devices),
// which sushy-tools' libvirt driver serves and Ironic's redfish inspection
// reads. Both group the disks per bus, the way sushy-tools names its
// SimpleStorage members (virtio, sata, ...), so the two views have the
// same IDs and the same disks.

// controller is the disks of one bus.
type controller struct {
	id    string
	disks []Disk
}

// controllersOf groups a system's disks by bus, in the order the buses
// first appear.
func controllersOf(sys *System) []controller {
	var out []controller
	index := map[string]int{}
	for _, d := range sys.Disks {
		bus := d.Bus
		if bus == "" {
			bus = "default"
		}
		i, ok := index[bus]
		if !ok {
			i = len(out)
			index[bus] = i
			out = append(out, controller{id: bus})
		}
		out[i].disks = append(out[i].disks, d)
	}
	return out
}

func findController(sys *System, id, kind string) (controller, error) {
	for _, c := range controllersOf(sys) {
		if c.id == id {
			return c, nil
		}
	}
	return controller{}, errResourceNotFound(kind, id)
}

func diskName(d Disk) string {
	if d.Name != "" {
		return d.Name
	}
	return d.ID
}

func statusEnabled() resource { return resource{"State": "Enabled", "Health": "OK"} }

func (s *Server) listStorage(w http.ResponseWriter, _ *http.Request, rq *request) error {
	sys := rq.system
	var paths []string
	for _, c := range controllersOf(sys) {
		paths = append(paths, storagePath(sys.ID, c.id))
	}
	writeJSON(w, http.StatusOK, collection("#StorageCollection.StorageCollection", storageCollectionPath(sys.ID), "Storage Collection", paths))
	return nil
}

func (s *Server) getStorage(w http.ResponseWriter, _ *http.Request, rq *request) error {
	sys := rq.system
	c, err := findController(sys, rq.param("storage"), "Storage")
	if err != nil {
		return err
	}
	drives := make([]string, len(c.disks))
	for i, d := range c.disks {
		drives[i] = drivePath(sys.ID, c.id, d.ID)
	}
	writeJSON(w, http.StatusOK, resource{
		"@odata.type":        "#Storage.v1_4_0.Storage",
		"@odata.id":          storagePath(sys.ID, c.id),
		"Id":                 c.id,
		"Name":               c.id + " Storage",
		"Status":             statusEnabled(),
		"Drives":             links(drives...),
		"Drives@odata.count": len(drives),
	})
	return nil
}

func (s *Server) getDrive(w http.ResponseWriter, _ *http.Request, rq *request) error {
	sys := rq.system
	c, err := findController(sys, rq.param("storage"), "Storage")
	if err != nil {
		return err
	}
	id := rq.param("drive")
	for _, d := range c.disks {
		if d.ID == id {
			writeJSON(w, http.StatusOK, driveResource(sys, c.id, d))
			return nil
		}
	}
	return errResourceNotFound("Drive", id)
}

func driveResource(sys *System, storage string, d Disk) resource {
	media := "HDD"
	if d.SSD {
		media = "SSD"
	}
	r := resource{
		"@odata.type":   "#Drive.v1_4_0.Drive",
		"@odata.id":     drivePath(sys.ID, storage, d.ID),
		"Id":            d.ID,
		"Name":          diskName(d),
		"CapacityBytes": d.CapacityBytes,
		"MediaType":     media,
		"Status":        statusEnabled(),
	}
	if p, ok := busProtocols[d.Bus]; ok {
		r["Protocol"] = p
	}
	return r
}

func (s *Server) listSimpleStorage(w http.ResponseWriter, _ *http.Request, rq *request) error {
	sys := rq.system
	var paths []string
	for _, c := range controllersOf(sys) {
		paths = append(paths, simpleStoragePath(sys.ID, c.id))
	}
	writeJSON(w, http.StatusOK, collection("#SimpleStorageCollection.SimpleStorageCollection", simpleStorageCollectionPath(sys.ID), "Simple Storage Collection", paths))
	return nil
}

func (s *Server) getSimpleStorage(w http.ResponseWriter, _ *http.Request, rq *request) error {
	sys := rq.system
	c, err := findController(sys, rq.param("storage"), "SimpleStorage")
	if err != nil {
		return err
	}
	devices := make([]resource, len(c.disks))
	for i, d := range c.disks {
		devices[i] = resource{"Name": diskName(d), "CapacityBytes": d.CapacityBytes, "Status": statusEnabled()}
	}
	writeJSON(w, http.StatusOK, resource{
		"@odata.type": "#SimpleStorage.v1_2_0.SimpleStorage",
		"@odata.id":   simpleStoragePath(sys.ID, c.id),
		"Id":          c.id,
		"Name":        c.id + " Controller",
		"Devices":     devices,
		"Status":      statusEnabled(),
	})
	return nil
}
