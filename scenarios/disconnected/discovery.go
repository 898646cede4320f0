package disconnected

import (
	"context"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/paritylab/paritylab/lab/assisted/agentapi"
	agentv1beta1 "github.com/paritylab/paritylab/providers/thirdparty/agentinstall/v1beta1"
	"github.com/paritylab/paritylab/scenarios"
)

// discoveryMirrors describes the mirror configuration inside the discovery
// images of the flow's InfraEnvs, read from each one's discovery ignition
// (status.bootArtifacts.discoveryIgnitionURL) as a host boots it: which
// registries.conf and CA file it writes, and their modes. Equal
// descriptions show once.
func discoveryMirrors(ctx context.Context, in scenarios.Input, namespace string) string {
	envs := &agentv1beta1.InfraEnvList{}
	if err := in.Lab.Client().List(ctx, envs, client.InNamespace(namespace)); err != nil {
		return "unreadable: " + err.Error()
	}
	seen := map[string]bool{}
	for _, ie := range envs.Items {
		if u := ie.Status.BootArtifacts.DiscoveryIgnitionURL; u != "" {
			seen[describeIgnition(ctx, in, u)] = true
		}
	}
	return listOrNone(keys(seen))
}

// ignition is the part of an Ignition config read here.
type ignition struct {
	Storage struct {
		Files []struct {
			Path     string `json:"path"`
			Mode     int    `json:"mode"`
			Contents struct {
				Source string `json:"source"`
			} `json:"contents"`
		} `json:"files"`
	} `json:"storage"`
}

func describeIgnition(ctx context.Context, in scenarios.Input, ignitionURL string) string {
	raw, err := fetch(ctx, ignitionURL)
	if err != nil {
		return "unreadable: " + err.Error()
	}
	var ign ignition
	if err := json.Unmarshal(raw, &ign); err != nil {
		return "not an Ignition config: " + err.Error()
	}
	conf, ca := "registries.conf none", "CA none"
	for _, f := range ign.Storage.Files {
		data, err := dataURL(f.Contents.Source)
		if err != nil {
			return fmt.Sprintf("file %s unreadable: %v", f.Path, err)
		}
		switch f.Path {
		case agentapi.RegistriesConfPath:
			what := "another registries.conf"
			if string(data) == site(in).RegistriesConf {
				what = "the site's registries.conf"
			}
			conf = fmt.Sprintf("%s %#o: %s", f.Path, f.Mode, what)
		case agentapi.RegistryCAPath:
			what := "no PEM certificate"
			if b, _ := pem.Decode(data); b != nil && b.Type == "CERTIFICATE" {
				what = "a PEM certificate"
			}
			ca = fmt.Sprintf("%s %#o: %s", f.Path, f.Mode, what)
		}
	}
	return conf + ", " + ca
}

// fetch GETs a URL of the lab's assisted service (on loopback).
func fetch(ctx context.Context, u string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET discovery ignition: %s", resp.Status)
	}
	return io.ReadAll(io.LimitReader(resp.Body, 8<<20))
}

// dataURL decodes the percent-encoded data URL an Ignition file carries.
func dataURL(src string) ([]byte, error) {
	data, ok := strings.CutPrefix(src, "data:,")
	if !ok {
		return nil, fmt.Errorf("source %.20q is not a plain data URL", src)
	}
	s, err := url.PathUnescape(data)
	return []byte(s), err
}
