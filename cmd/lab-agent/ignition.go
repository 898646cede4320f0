package main

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/paritylab/paritylab/lab/assisted/agentapi"
)

// ignitionConfig is the part of an Ignition config the agent reads: the
// files it would write.
type ignitionConfig struct {
	Ignition *struct {
		Version string `json:"version"`
	} `json:"ignition"`
	Storage struct {
		Files []struct {
			Path     string `json:"path"`
			Contents struct {
				Source string `json:"source"`
			} `json:"contents"`
		} `json:"files"`
	} `json:"storage"`
}

// parseUserData reads user data that is either a UserData document or an
// Ignition config carrying one at agentapi.UserDataFile.
func parseUserData(raw []byte) (agentapi.UserData, error) {
	var ud agentapi.UserData
	var ign ignitionConfig
	if err := json.Unmarshal(raw, &ign); err != nil {
		return ud, fmt.Errorf("user data is not JSON: %w", err)
	}
	if ign.Ignition == nil {
		return ud, json.Unmarshal(raw, &ud)
	}
	for _, f := range ign.Storage.Files {
		if f.Path != agentapi.UserDataFile {
			continue
		}
		data, err := decodeDataURL(f.Contents.Source)
		if err != nil {
			return ud, fmt.Errorf("ignition file %s: %w", f.Path, err)
		}
		return ud, json.Unmarshal(data, &ud)
	}
	return ud, errors.New("ignition config carries no " + agentapi.UserDataFile)
}

// decodeDataURL decodes an RFC 2397 data URL, percent-encoded or base64.
func decodeDataURL(src string) ([]byte, error) {
	rest, ok := strings.CutPrefix(src, "data:")
	if !ok {
		return nil, fmt.Errorf("source %.30q is not a data URL", src)
	}
	meta, data, ok := strings.Cut(rest, ",")
	if !ok {
		return nil, errors.New("data URL without ','")
	}
	if strings.HasSuffix(meta, ";base64") {
		return base64.StdEncoding.DecodeString(data)
	}
	s, err := url.PathUnescape(data)
	return []byte(s), err
}
