package ignition

import (
	"fmt"
	"strings"
)

// The boot scripts that resolve the kubelet's metadata variables.
const (
	metadataEnvScript = "/usr/local/bin/capi-metadata-env"
	kubeletEnvScript  = "/usr/local/bin/capi-kubelet-env"
)

// metadataEnvScriptText mounts the config-2 drive read-only and writes
// each key of its meta_data.json as METADATA_<KEY>=<value> (metadataref's
// naming) to MetadataEnvPath.
const metadataEnvScriptText = `#!/bin/bash
set -euo pipefail
drive=$(mktemp -d)
trap 'umount "$drive" 2>/dev/null || true; rmdir "$drive"' EXIT
mount -o ro -L config-2 "$drive"
jq -r 'to_entries[] | "METADATA_\(.key | ascii_upcase | gsub("-"; "_"))=\(.value)"' \
	"$drive/openstack/latest/meta_data.json" > ` + MetadataEnvPath + `.tmp
mv ` + MetadataEnvPath + `.tmp ` + MetadataEnvPath + `
`

// kubeletEnvScriptText reads the variables env names from MetadataEnvPath
// (as text, never evaluated) and writes env to KubeletEnvPath with them.
func kubeletEnvScriptText(env string, names []string) string {
	var b strings.Builder
	b.WriteString("#!/bin/bash\nset -euo pipefail\n")
	for _, n := range names {
		// names are metadataref names: letters, digits and '_'.
		fmt.Fprintf(&b, "%s=$(sed -n 's/^%s=//p' %s | head -n 1)\n", n, n, MetadataEnvPath)
	}
	fmt.Fprintf(&b, "cat > %s <<EOF\n%sEOF\n", KubeletEnvPath, env)
	return b.String()
}

var metadataEnvUnit = unit{Name: "capi-metadata-env.service", Enabled: true, Contents: `[Unit]
Description=Config drive metadata for the kubelet
Before=capi-kubelet-env.service

[Service]
Type=oneshot
RemainAfterExit=yes
ExecStart=` + metadataEnvScript + `

[Install]
WantedBy=multi-user.target
`}

var kubeletEnvUnit = unit{Name: "capi-kubelet-env.service", Enabled: true, Contents: `[Unit]
Description=Kubelet labels and provider ID from config drive metadata
Requires=capi-metadata-env.service
After=capi-metadata-env.service
Before=kubelet.service

[Service]
Type=oneshot
RemainAfterExit=yes
ExecStart=` + kubeletEnvScript + `

[Install]
WantedBy=multi-user.target
`}
