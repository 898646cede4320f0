package registry

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
)

// configFile is the registry's configuration in Dir.
const configFile = "config.yml"

// writeConfig writes the configuration: a JSON log, whose entry for each
// request ("response completed") names everything the combined access log
// would and the repository and reference too, so that access log is off;
// filesystem storage under
// dataDir, deletes allowed (an image can be taken out of a mirror), no
// authentication, the HTTP listener on addr only. The registry reads
// REGISTRY_* environment variables over its file; Start clears none, so
// a user can still tune it, but every key below is set explicitly so that
// Debian's /etc/docker/registry/config.yml (port 5000 on every
// interface) is never what runs.
//
// The HTTP secret signs upload state between requests; one registry
// process needs one of its own, random, or it logs that it made one up.
func writeConfig(dir, dataDir, addr string) (string, error) {
	secret := make([]byte, 24)
	if _, err := rand.Read(secret); err != nil {
		return "", fmt.Errorf("registry http secret: %w", err)
	}
	cfg := fmt.Sprintf(`version: 0.1
log:
  level: info
  formatter: json
  accesslog:
    disabled: true
storage:
  filesystem:
    rootdirectory: %s
  delete:
    enabled: true
  maintenance:
    uploadpurging:
      enabled: false
http:
  addr: %s
  secret: %s
  headers:
    X-Content-Type-Options: [nosniff]
`, dataDir, addr, hex.EncodeToString(secret))
	path := filepath.Join(dir, configFile)
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		return "", fmt.Errorf("write registry config %s: %w", path, err)
	}
	return path, nil
}
