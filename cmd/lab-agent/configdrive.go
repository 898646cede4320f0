package main

import (
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

// readConfigDrive mounts the CD that holds a config-2 drive, if any, and
// reads its user data.
func (s *system) readConfigDrive() (agentapi.UserData, error) {
	var ud agentapi.UserData
	devs, _ := filepath.Glob(s.path("sys/block/sr*"))
	for _, dev := range devs {
		node := "/dev/" + filepath.Base(dev)
		raw, err := readUserData(node)
		if err != nil {
			continue
		}
		ud, err := parseUserData(raw)
		if err != nil {
			return ud, fmt.Errorf("config drive user data: %w", err)
		}
		return ud, nil
	}
	return ud, errNoConfigDrive
}

// readUserData mounts an ISO 9660 device read-only and returns
// openstack/latest/user_data if its label is config-2.
func readUserData(device string) ([]byte, error) {
	label, err := isoLabel(device)
	if err != nil || label != configDriveLabel {
		return nil, errNoConfigDrive
	}
	mnt, err := os.MkdirTemp("", "config-2-")
	if err != nil {
		return nil, err
	}
	defer os.Remove(mnt)
	if err := syscall.Mount(device, mnt, "iso9660", syscall.MS_RDONLY, ""); err != nil {
		return nil, fmt.Errorf("mount %s: %w", device, err)
	}
	defer syscall.Unmount(mnt, 0)
	return os.ReadFile(filepath.Join(mnt, "openstack", "latest", "user_data"))
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
