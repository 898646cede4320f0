package redfish

import (
	"net/http"
)

// FirmwareVersion is what every emulated BMC reports.
const FirmwareVersion = "paritylab-redfish-1.0"

func (s *Server) listNICs(w http.ResponseWriter, _ *http.Request, rq *request) error {
	paths := make([]string, len(rq.system.NICs))
	for i, n := range rq.system.NICs {
		paths[i] = nicPath(rq.system.ID, n.ID)
	}
	writeJSON(w, http.StatusOK, collection("#EthernetInterfaceCollection.EthernetInterfaceCollection", nicsPath(rq.system.ID), "Ethernet Interface Collection", paths))
	return nil
}

func (s *Server) getNIC(w http.ResponseWriter, _ *http.Request, rq *request) error {
	id := rq.param("nic")
	for _, n := range rq.system.NICs {
		if n.ID != id {
			continue
		}
		writeJSON(w, http.StatusOK, resource{
			"@odata.type":         "#EthernetInterface.v1_4_0.EthernetInterface",
			"@odata.id":           nicPath(rq.system.ID, n.ID),
			"Id":                  n.ID,
			"Name":                "Ethernet Interface " + n.ID,
			"MACAddress":          n.MAC,
			"PermanentMACAddress": n.MAC,
			"Status":              resource{"State": "Enabled", "Health": "OK"},
		})
		return nil
	}
	return errResourceNotFound("EthernetInterface", id)
}

// systemMembers lists the paths of one resource per system.
func (s *Server) systemMembers(r *http.Request, path func(string) string) ([]string, error) {
	ids, err := s.backend.Systems(r.Context())
	if err != nil {
		return nil, backendError(err, "GeneralError", "ResourceInUse")
	}
	paths := make([]string, len(ids))
	for i, id := range ids {
		paths[i] = path(id)
	}
	return paths, nil
}

func (s *Server) listManagers(w http.ResponseWriter, r *http.Request, _ *request) error {
	paths, err := s.systemMembers(r, managerPath)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, collection("#ManagerCollection.ManagerCollection", managersPath, "Manager Collection", paths))
	return nil
}

// getManager serves the BMC of one system: same ID, and the system's
// VirtualMedia collection, which is where sushy looks for it.
func (s *Server) getManager(w http.ResponseWriter, _ *http.Request, rq *request) error {
	sys := rq.system
	writeJSON(w, http.StatusOK, resource{
		"@odata.type":     "#Manager.v1_10_0.Manager",
		"@odata.id":       managerPath(sys.ID),
		"Id":              sys.ID,
		"Name":            "Manager for " + sys.Name,
		"ManagerType":     "BMC",
		"UUID":            sys.UUID,
		"Model":           "paritylab Redfish emulator",
		"FirmwareVersion": FirmwareVersion,
		"Status":          resource{"State": "Enabled", "Health": "OK"},
		"VirtualMedia":    link(mediaCollectionPath(sys.ID)),
		"Links": resource{
			"ManagerForServers": links(systemPath(sys.ID)),
			"ManagerForChassis": links(chassisItemPath(sys.ID)),
		},
	})
	return nil
}

func (s *Server) listChassis(w http.ResponseWriter, r *http.Request, _ *request) error {
	paths, err := s.systemMembers(r, chassisItemPath)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, collection("#ChassisCollection.ChassisCollection", chassisPath, "Chassis Collection", paths))
	return nil
}

func (s *Server) getChassis(w http.ResponseWriter, _ *http.Request, rq *request) error {
	sys := rq.system
	writeJSON(w, http.StatusOK, resource{
		"@odata.type": "#Chassis.v1_10_0.Chassis",
		"@odata.id":   chassisItemPath(sys.ID),
		"Id":          sys.ID,
		"Name":        "Chassis of " + sys.Name,
		"ChassisType": "RackMount",
		"PowerState":  sys.PowerState,
		"Status":      resource{"State": "Enabled", "Health": "OK"},
		"Links": resource{
			"ComputerSystems": links(systemPath(sys.ID)),
			"ManagedBy":       links(managerPath(sys.ID)),
		},
	})
	return nil
}
