package ignition

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
)

// Version is the ignition spec version rendered; assisted-service merges
// overrides of spec 3.1 and later.
const Version = "3.2.0"

// SentinelPath is the file Cluster API's bootstrap contract asks a node to
// create once bootstrapped.
const SentinelPath = "/run/cluster-api/bootstrap-success.complete"

// KubeletEnvPath is the environment file OpenShift's kubelet unit reads;
// KUBELET_PROVIDERID there becomes --provider-id.
const KubeletEnvPath = "/etc/kubernetes/kubelet-env"

// Options say what the override does.
type Options struct {
	// ProviderID, when set, is the kubelet's provider ID.
	ProviderID string
}

type config struct {
	Ignition struct {
		Version string `json:"version"`
	} `json:"ignition"`
	Storage *storage `json:"storage,omitempty"`
	Systemd systemd  `json:"systemd"`
}

type storage struct {
	Files []file `json:"files"`
}

type file struct {
	Path      string   `json:"path"`
	Mode      int      `json:"mode"`
	Overwrite bool     `json:"overwrite"`
	Contents  contents `json:"contents"`
}

type contents struct {
	Source string `json:"source"`
}

type systemd struct {
	Units []unit `json:"units"`
}

type unit struct {
	Name     string `json:"name"`
	Enabled  bool   `json:"enabled"`
	Contents string `json:"contents"`
}

const sentinelUnit = `[Unit]
Description=Cluster API bootstrap sentinel
After=kubelet.service
Wants=kubelet.service

[Service]
Type=oneshot
ExecStart=/bin/sh -c 'mkdir -p /run/cluster-api && touch ` + SentinelPath + `'

[Install]
WantedBy=multi-user.target
`

// Override renders the ignition override JSON.
func Override(o Options) (string, error) {
	var c config
	c.Ignition.Version = Version
	if o.ProviderID != "" {
		c.Storage = &storage{Files: []file{{
			Path: KubeletEnvPath, Mode: 0o644, Overwrite: true,
			Contents: contents{Source: dataURL(fmt.Sprintf("KUBELET_PROVIDERID=%s\n", o.ProviderID))},
		}}}
	}
	c.Systemd.Units = []unit{{Name: "capi-bootstrap-sentinel.service", Enabled: true, Contents: sentinelUnit}}
	raw, err := json.Marshal(c)
	if err != nil {
		return "", fmt.Errorf("render ignition override: %w", err)
	}
	return string(raw), nil
}

func dataURL(s string) string {
	return "data:text/plain;charset=utf-8;base64," + base64.StdEncoding.EncodeToString([]byte(s))
}
