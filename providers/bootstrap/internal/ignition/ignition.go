package ignition

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/paritylab/paritylab/providers/bootstrap/metadataref"
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

// MetadataEnvPath is where a node keeps its config drive metadata as
// METADATA_<KEY>=<value> lines (metadataref), for the kubelet's settings
// that name them.
const MetadataEnvPath = "/etc/metadata_env"

// Options say what the override does.
type Options struct {
	// ProviderID, when set, is the kubelet's provider ID: a value or a
	// config drive metadata variable (metadataref).
	ProviderID string
	// KubeletLabels are "key=value" labels the kubelet registers the node
	// with; a value may be a config drive metadata variable.
	KubeletLabels []string
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

// Override renders the ignition override JSON. The kubelet's labels and
// provider ID go to KubeletEnvPath (CUSTOM_KUBELET_LABELS, which
// OpenShift's kubelet unit adds to --node-labels, and KUBELET_PROVIDERID);
// when they name metadata variables, two boot units before the kubelet
// read the config drive's metadata into MetadataEnvPath and write the
// file from it.
func Override(o Options) (string, error) {
	var c config
	c.Ignition.Version = Version
	env, refs, err := kubeletEnv(o, nil)
	if err != nil {
		return "", err
	}
	if len(refs) > 0 {
		// The text goes into a shell here-document: plain values must
		// not expand.
		env, _, _ = kubeletEnv(o, hereDocEscaper.Replace)
	}
	switch {
	case env == "":
	case len(refs) == 0:
		c.Storage = &storage{Files: []file{{Path: KubeletEnvPath, Mode: 0o644, Overwrite: true, Contents: contents{Source: dataURL(env)}}}}
	default:
		c.Storage = &storage{Files: []file{
			{Path: metadataEnvScript, Mode: 0o755, Overwrite: true, Contents: contents{Source: dataURL(metadataEnvScriptText)}},
			{Path: kubeletEnvScript, Mode: 0o755, Overwrite: true, Contents: contents{Source: dataURL(kubeletEnvScriptText(env, refs))}},
		}}
		c.Systemd.Units = append(c.Systemd.Units, metadataEnvUnit, kubeletEnvUnit)
	}
	c.Systemd.Units = append(c.Systemd.Units, unit{Name: "capi-bootstrap-sentinel.service", Enabled: true, Contents: sentinelUnit})
	raw, err := json.Marshal(c)
	if err != nil {
		return "", fmt.Errorf("render ignition override: %w", err)
	}
	return string(raw), nil
}

// hereDocEscaper quotes what an unquoted shell here-document expands.
var hereDocEscaper = strings.NewReplacer(`\`, `\\`, `$`, `\$`, "`", "\\`")

// kubeletEnv is the kubelet environment file's text, with a metadata
// variable written ${NAME} and plain values passed through escape (when
// set), and the variables it names, sorted.
func kubeletEnv(o Options, escape func(string) string) (string, []string, error) {
	names := map[string]bool{}
	value := func(v string) (string, error) {
		n, ref, err := metadataref.Parse(v)
		if err != nil {
			return "", err
		}
		if !ref {
			if escape != nil {
				v = escape(v)
			}
			return v, nil
		}
		names[n] = true
		return "${" + n + "}", nil
	}
	var b strings.Builder
	if len(o.KubeletLabels) > 0 {
		labels := make([]string, 0, len(o.KubeletLabels))
		for _, l := range o.KubeletLabels {
			k, v, _ := strings.Cut(l, "=")
			rendered, err := value(v)
			if err != nil {
				return "", nil, fmt.Errorf("kubelet label %q: %w", l, err)
			}
			labels = append(labels, k+"="+rendered)
		}
		fmt.Fprintf(&b, "CUSTOM_KUBELET_LABELS=%s\n", strings.Join(labels, ","))
	}
	if o.ProviderID != "" {
		rendered, err := value(o.ProviderID)
		if err != nil {
			return "", nil, fmt.Errorf("provider ID: %w", err)
		}
		fmt.Fprintf(&b, "KUBELET_PROVIDERID=%s\n", rendered)
	}
	refs := make([]string, 0, len(names))
	for n := range names {
		refs = append(refs, n)
	}
	sort.Strings(refs)
	return b.String(), refs, nil
}

func dataURL(s string) string {
	return "data:text/plain;charset=utf-8;base64," + base64.StdEncoding.EncodeToString([]byte(s))
}
