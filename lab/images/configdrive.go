package images

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// ConfigDriveLabel is the volume label guests look for, as cloud-init and
// Ignition do for OpenStack-style config drives.
const ConfigDriveLabel = "config-2"

// ConfigDrive is the user data (and instance metadata) a provisioner hands a
// host on a config-2 drive.
type ConfigDrive struct {
	// UserData is openstack/latest/user_data.
	UserData []byte
	// MetaData is openstack/latest/meta_data.json (uuid, hostname, ...).
	MetaData map[string]string
}

type configDriveKey struct {
	UserData string            `json:"userData"`
	MetaData map[string]string `json:"metaData"`
}

// ConfigDriveISO builds (or finds in the cache) a config-2 ISO.
func (s *Store) ConfigDriveISO(cd ConfigDrive) (string, error) {
	meta, err := json.Marshal(cd.MetaData)
	if err != nil {
		return "", fmt.Errorf("encode config drive metadata: %w", err)
	}
	key := configDriveKey{UserData: string(cd.UserData), MetaData: cd.MetaData}
	return s.cached(key, ".config2.iso", func(tmp string) error {
		tree, err := os.MkdirTemp(s.dir, "config2-")
		if err != nil {
			return fmt.Errorf("create config drive tree: %w", err)
		}
		defer os.RemoveAll(tree)
		dir := filepath.Join(tree, "openstack", "latest")
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return fmt.Errorf("create config drive tree: %w", err)
		}
		for name, content := range map[string][]byte{"user_data": cd.UserData, "meta_data.json": meta} {
			if err := os.WriteFile(filepath.Join(dir, name), content, 0o644); err != nil {
				return fmt.Errorf("write config drive %s: %w", name, err)
			}
		}
		var out bytes.Buffer
		cmd := exec.Command("xorriso", "-as", "mkisofs", "-quiet", "-o", tmp, "-V", ConfigDriveLabel, "-J", "-R", tree)
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("xorriso: %w: %s", err, strings.TrimSpace(out.String()))
		}
		return nil
	})
}
