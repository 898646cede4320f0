package assisted

import (
	"encoding/base64"
	"encoding/json"
	"testing"
)

func overrideWith(t *testing.T, contents ...string) string {
	t.Helper()
	type file struct {
		Path     string            `json:"path"`
		Contents map[string]string `json:"contents"`
	}
	var fs []file
	for i, c := range contents {
		fs = append(fs, file{Path: "/f" + string(rune('0'+i)), Contents: map[string]string{
			"source": "data:text/plain;charset=utf-8;base64," + base64.StdEncoding.EncodeToString([]byte(c))}})
	}
	raw, err := json.Marshal(map[string]any{"ignition": map[string]string{"version": "3.2.0"}, "storage": map[string]any{"files": fs}})
	if err != nil {
		t.Fatal(err)
	}
	return string(raw)
}

// The kubelet settings are read from what writes them: a plain
// environment file or a boot script (ours or CAPOA's), references to
// config drive metadata left for the node.
func TestKubeletSettingsFromOverrides(t *testing.T) {
	for name, tc := range map[string]struct {
		override string
		want     kubeletSettings
	}{
		"none": {override: ""},
		"env file": {
			override: overrideWith(t, "CUSTOM_KUBELET_LABELS=rack=r1,zone=\nKUBELET_PROVIDERID=metal3://ns/h/m\n"),
			want:     kubeletSettings{ProviderID: "metal3://ns/h/m", Labels: map[string]string{"rack": "r1", "zone": ""}},
		},
		"script": {
			override: overrideWith(t, "#!/bin/bash\nM=$(x)\ncat > /etc/kubernetes/kubelet-env <<EOF\nCUSTOM_KUBELET_LABELS=metal3.io/uuid=${METADATA_UUID}\nKUBELET_PROVIDERID=$METADATA_PID\nEOF\n"),
			want:     kubeletSettings{ProviderID: "$METADATA_PID", Labels: map[string]string{"metal3.io/uuid": "${METADATA_UUID}"}},
		},
		"echo to a file": {
			override: overrideWith(t, "unrelated", `echo "CUSTOM_KUBELET_LABELS=metal3.io/uuid=${METADATA_UUID}" | tee -a /etc/kubernetes/kubelet-env`),
			want:     kubeletSettings{Labels: map[string]string{"metal3.io/uuid": "${METADATA_UUID}"}},
		},
	} {
		got := kubeletSettingsFromOverrides(tc.override)
		if got.ProviderID != tc.want.ProviderID || len(got.Labels) != len(tc.want.Labels) {
			t.Errorf("%s: %+v, want %+v", name, got, tc.want)
			continue
		}
		for k, v := range tc.want.Labels {
			if got.Labels[k] != v {
				t.Errorf("%s: label %s=%q, want %q", name, k, got.Labels[k], v)
			}
		}
	}
}
