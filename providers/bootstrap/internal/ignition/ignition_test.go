package ignition

import (
	"encoding/base64"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func files(t *testing.T, override string) map[string]string {
	t.Helper()
	var c config
	if err := json.Unmarshal([]byte(override), &c); err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	if c.Storage == nil {
		return out
	}
	for _, f := range c.Storage.Files {
		_, b64, _ := strings.Cut(f.Contents.Source, "base64,")
		raw, err := base64.StdEncoding.DecodeString(b64)
		if err != nil {
			t.Fatal(err)
		}
		out[f.Path] = string(raw)
	}
	return out
}

// The boot script writes the kubelet's settings with the metadata values
// and plain values as they are, whatever shell characters they hold.
func TestKubeletEnvScriptResolvesMetadata(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("bash is needed to run the boot script")
	}
	out, err := Override(Options{
		KubeletLabels: []string{"metal3.io/uuid=$METADATA_UUID", "name=${METADATA_LOCAL_HOSTNAME}", "rack=r1"},
		ProviderID:    "metal3://ns/$host`x`\\y",
	})
	if err != nil {
		t.Fatal(err)
	}
	script, ok := files(t, out)[kubeletEnvScript]
	if !ok {
		t.Fatalf("no %s in %s", kubeletEnvScript, out)
	}
	dir := t.TempDir()
	metaEnv, kubeletEnv := filepath.Join(dir, "metadata_env"), filepath.Join(dir, "kubelet-env")
	if err := os.WriteFile(metaEnv, []byte("METADATA_LOCAL_HOSTNAME=host-1\nMETADATA_UUID=5e0c-$(x)\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	script = strings.NewReplacer(MetadataEnvPath, metaEnv, KubeletEnvPath, kubeletEnv).Replace(script)
	if raw, err := exec.Command("bash", "-c", script).CombinedOutput(); err != nil {
		t.Fatalf("script: %v\n%s\n%s", err, raw, script)
	}
	got, err := os.ReadFile(kubeletEnv)
	if err != nil {
		t.Fatal(err)
	}
	want := "CUSTOM_KUBELET_LABELS=metal3.io/uuid=5e0c-$(x),name=host-1,rack=r1\nKUBELET_PROVIDERID=metal3://ns/$host`x`\\y\n"
	if string(got) != want {
		t.Fatalf("kubelet env:\n%s\nwant:\n%s", got, want)
	}
}

// Without metadata variables the settings are a plain file.
func TestKubeletEnvWithoutMetadataIsAFile(t *testing.T) {
	out, err := Override(Options{KubeletLabels: []string{"rack=r1"}, ProviderID: "metal3://ns/h/m"})
	if err != nil {
		t.Fatal(err)
	}
	f := files(t, out)
	if f[KubeletEnvPath] != "CUSTOM_KUBELET_LABELS=rack=r1\nKUBELET_PROVIDERID=metal3://ns/h/m\n" || len(f) != 1 {
		t.Fatalf("files %v", f)
	}
}

func TestMalformedReferenceIsAnError(t *testing.T) {
	if _, err := Override(Options{KubeletLabels: []string{"a=${OOPS"}}); err == nil {
		t.Fatal("no error")
	}
}
