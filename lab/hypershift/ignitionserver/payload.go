package ignitionserver

import (
	"encoding/base64"
	"encoding/json"
	"fmt"

	"github.com/paritylab/paritylab/lab/assisted/agentapi"
)

// ignitionVersion is the spec version of the payload, that of HyperShift's
// user data (hypershift-operator/controllers/nodepool/token.go L448).
const ignitionVersion = "3.2.0"

// userDataMode: the file holds a private key.
const userDataMode = 0o600

type ignitionConfig struct {
	Ignition struct {
		Version string `json:"version"`
	} `json:"ignition"`
	Storage struct {
		Files []ignitionFile `json:"files"`
	} `json:"storage"`
}

type ignitionFile struct {
	Path      string                    `json:"path"`
	Mode      int                       `json:"mode"`
	Overwrite bool                      `json:"overwrite"`
	Contents  agentapi.IgnitionResource `json:"contents"`
}

// renderPayload is what the server hands a valid token: an Ignition config
// whose one file, agentapi.UserDataFile, carries node as an
// agentapi.UserData in a base64 data URL, what cmd/lab-agent joins with.
func renderPayload(node agentapi.NodeConfig) ([]byte, error) {
	ud, err := json.Marshal(agentapi.UserData{Node: &node})
	if err != nil {
		return nil, fmt.Errorf("encode node config: %w", err)
	}
	var cfg ignitionConfig
	cfg.Ignition.Version = ignitionVersion
	cfg.Storage.Files = []ignitionFile{{
		Path: agentapi.UserDataFile, Mode: userDataMode, Overwrite: true,
		Contents: agentapi.IgnitionResource{Source: "data:;base64," + base64.StdEncoding.EncodeToString(ud)},
	}}
	return json.Marshal(cfg)
}
