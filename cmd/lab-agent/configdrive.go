package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/paritylab/paritylab/lab/assisted/agentapi"
)

// configDriveLabel is the volume label of an OpenStack-style config drive.
const configDriveLabel = "config-2"

var errNoConfigDrive = errors.New("no config-2 drive")

// configDrive is what a config-2 drive carries for the agent.
type configDrive struct {
	userData agentapi.UserData
	// raw is the user data as written, for digests.
	raw []byte
	// metaData is meta_data.json (host names, uuid); may be empty.
	metaData map[string]string
}

// readConfigDrive mounts the CD that holds a config-2 drive, if any, and
// reads its user data.
func (s *system) readConfigDrive() (agentapi.UserData, error) {
	cd, err := s.readConfigDriveFull()
	return cd.userData, err
}

// readConfigDriveFull reads a config-2 drive's user data and metadata.
func (s *system) readConfigDriveFull() (configDrive, error) {
	devs, _ := filepath.Glob(s.path("sys/block/sr*"))
	for _, dev := range devs {
		node := "/dev/" + filepath.Base(dev)
		cd, err := readConfigDriveFiles(node)
		if err != nil {
			continue
		}
		cd.userData, err = parseUserData(cd.raw)
		if err != nil {
			return cd, fmt.Errorf("config drive user data: %w", err)
		}
		return cd, nil
	}
	return configDrive{}, errNoConfigDrive
}

// readConfigDriveFiles mounts an ISO 9660 device read-only and reads
// openstack/latest/user_data and meta_data.json if its label is config-2.
func readConfigDriveFiles(device string) (configDrive, error) {
	var cd configDrive
	label, err := isoLabel(device)
	if err != nil || label != configDriveLabel {
		return cd, errNoConfigDrive
	}
	mnt, err := os.MkdirTemp("", "config-2-")
	if err != nil {
		return cd, err
	}
	defer os.Remove(mnt)
	if err := syscall.Mount(device, mnt, "iso9660", syscall.MS_RDONLY, ""); err != nil {
		return cd, fmt.Errorf("mount %s: %w", device, err)
	}
	defer syscall.Unmount(mnt, 0)
	dir := filepath.Join(mnt, "openstack", "latest")
	if cd.raw, err = os.ReadFile(filepath.Join(dir, "user_data")); err != nil {
		return cd, err
	}
	// Metadata is optional; a drive without it names no host.
	if meta, err := os.ReadFile(filepath.Join(dir, "meta_data.json")); err == nil {
		_ = json.Unmarshal(meta, &cd.metaData)
	}
	return cd, nil
}

// isoLabel reads the volume ID of an ISO 9660 filesystem (primary volume
// descriptor at sector 16, ID at bytes 40-72).
func isoLabel(device string) (string, error) {
	f, err := os.Open(device)
	if err != nil {
		return "", err
	}
	defer f.Close()
	pvd := make([]byte, 2048)
	if _, err := f.ReadAt(pvd, 16*2048); err != nil {
		return "", err
	}
	if string(pvd[1:6]) != "CD001" {
		return "", errors.New("not ISO 9660")
	}
	return strings.TrimSpace(string(pvd[40:72])), nil
}
