package redfish

import "net/http"

// makeRoutes is the whole URL space of the service.
func (s *Server) makeRoutes() []*route {
	const (
		get, post, patch = http.MethodGet, http.MethodPost, http.MethodPatch
		put, del         = http.MethodPut, http.MethodDelete
		sys              = systemsPath + "/{system}"
		media            = sys + "/VirtualMedia/{device}"
		computerSystem   = "ComputerSystem"
	)
	return []*route{
		newRoute("/redfish").on(get, s.getVersions).open(),
		newRoute(rootPath).on(get, s.getServiceRoot).open(),
		newRoute(sessionServicePath).on(get, s.getSessionService),
		newRoute(sessionsPath).on(get, s.listSessions).on(post, s.createSession).openFor(post),
		newRoute(sessionsPath+"/{session}").on(get, s.getSession).on(del, s.deleteSession),
		newRoute(systemsPath).on(get, s.listSystems),
		newRoute(sys).on(get, s.getSystem).on(patch, s.patchSystem).system(computerSystem),
		newRoute(sys+"/Actions/ComputerSystem.Reset").on(post, s.resetSystem).system(computerSystem).resetAction(),
		newRoute(sys+"/EthernetInterfaces").on(get, s.listNICs).system(computerSystem),
		newRoute(sys+"/EthernetInterfaces/{nic}").on(get, s.getNIC).system(computerSystem),
		newRoute(sys+"/Processors").on(get, s.listProcessors).system(computerSystem),
		newRoute(sys+"/Processors/{processor}").on(get, s.getProcessor).system(computerSystem),
		newRoute(sys+"/Storage").on(get, s.listStorage).system(computerSystem),
		newRoute(sys+"/Storage/{storage}").on(get, s.getStorage).system(computerSystem),
		newRoute(sys+"/Storage/{storage}/Drives/{drive}").on(get, s.getDrive).system(computerSystem),
		newRoute(sys+"/SimpleStorage").on(get, s.listSimpleStorage).system(computerSystem),
		newRoute(sys+"/SimpleStorage/{storage}").on(get, s.getSimpleStorage).system(computerSystem),
		newRoute(sys+"/VirtualMedia").on(get, s.listMedia).system(computerSystem),
		newRoute(media).on(get, s.getMedia).system(computerSystem),
		newRoute(media+"/Actions/VirtualMedia.InsertMedia").on(post, s.insertMedia).system(computerSystem),
		newRoute(media+"/Actions/VirtualMedia.EjectMedia").on(post, s.ejectMedia).system(computerSystem),
		newRoute(managersPath).on(get, s.listManagers),
		newRoute(managersPath+"/{system}").on(get, s.getManager).system("Manager"),
		newRoute(chassisPath).on(get, s.listChassis),
		newRoute(chassisPath+"/{system}").on(get, s.getChassis).system("Chassis"),
		newRoute(adminPath+"/{system}/faults").on(get, s.getFault).on(put, s.putFault).on(del, s.deleteFault).system(computerSystem).adminAPI(),
		newRoute(adminPath+"/{system}/operations").on(get, s.getOperations).system(computerSystem).adminAPI(),
	}
}
