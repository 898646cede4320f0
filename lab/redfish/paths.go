package redfish

import "net/url"

// URL paths of the resources the server serves. IDs are escaped: a backend
// may use any string as an ID.
const (
	rootPath           = "/redfish/v1"
	systemsPath        = rootPath + "/Systems"
	managersPath       = rootPath + "/Managers"
	chassisPath        = rootPath + "/Chassis"
	sessionServicePath = rootPath + "/SessionService"
	sessionsPath       = sessionServicePath + "/Sessions"
	adminPath          = "/paritylab/v1/systems"
)

func systemPath(id string) string  { return systemsPath + "/" + url.PathEscape(id) }
func managerPath(id string) string { return managersPath + "/" + url.PathEscape(id) }
func chassisItemPath(id string) string {
	return chassisPath + "/" + url.PathEscape(id)
}
func sessionPath(id string) string { return sessionsPath + "/" + url.PathEscape(id) }
func resetPath(id string) string {
	return systemPath(id) + "/Actions/ComputerSystem.Reset"
}
func nicsPath(id string) string { return systemPath(id) + "/EthernetInterfaces" }
func nicPath(id, nic string) string {
	return nicsPath(id) + "/" + url.PathEscape(nic)
}
func mediaCollectionPath(id string) string { return systemPath(id) + "/VirtualMedia" }
func mediaPath(id, device string) string {
	return mediaCollectionPath(id) + "/" + url.PathEscape(device)
}
func insertMediaPath(id, device string) string {
	return mediaPath(id, device) + "/Actions/VirtualMedia.InsertMedia"
}
func ejectMediaPath(id, device string) string {
	return mediaPath(id, device) + "/Actions/VirtualMedia.EjectMedia"
}
func processorsPath(id string) string { return systemPath(id) + "/Processors" }
func processorPath(id, cpu string) string {
	return processorsPath(id) + "/" + url.PathEscape(cpu)
}
func storageCollectionPath(id string) string { return systemPath(id) + "/Storage" }
func storagePath(id, storage string) string {
	return storageCollectionPath(id) + "/" + url.PathEscape(storage)
}
func drivePath(id, storage, drive string) string {
	return storagePath(id, storage) + "/Drives/" + url.PathEscape(drive)
}
func simpleStorageCollectionPath(id string) string { return systemPath(id) + "/SimpleStorage" }
func simpleStoragePath(id, storage string) string {
	return simpleStorageCollectionPath(id) + "/" + url.PathEscape(storage)
}
