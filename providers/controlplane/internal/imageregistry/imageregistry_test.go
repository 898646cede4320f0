package imageregistry

import (
	"encoding/json"
	"strings"
	"testing"

	configv1 "github.com/openshift/api/config/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ocMirrorConf is an oc-mirror style configuration: the release images'
// source with two mirrors (order kept), the components' source with one
// tag-only mirror beside a digest mirror, and an insecure mirror.
const ocMirrorConf = `
unqualified-search-registries = ["registry.access.redhat.com"]

[[registry]]
prefix = ""
location = "quay.io/openshift-release-dev/ocp-release"
mirror-by-digest-only = true

  [[registry.mirror]]
  location = "mirror-a.example:5000/openshift/release-images"

  [[registry.mirror]]
  location = "mirror-b.example:5000/openshift/release-images"
  insecure = true

[[registry]]
location = "quay.io/openshift-release-dev/ocp-v4.0-art-dev"

  [[registry.mirror]]
  location = "mirror-a.example:5000/openshift/release"

  [[registry.mirror]]
  location = "mirror-a.example:5000/openshift/release-tags"
  pull-from-mirror = "tag-only"
`

func TestParseMirrors(t *testing.T) {
	m, err := ParseMirrors(ocMirrorConf)
	if err != nil {
		t.Fatal(err)
	}
	wantDigest := []configv1.ImageDigestMirrors{
		{Source: "quay.io/openshift-release-dev/ocp-release", Mirrors: []configv1.ImageMirror{
			"mirror-a.example:5000/openshift/release-images", "mirror-b.example:5000/openshift/release-images"}},
		{Source: "quay.io/openshift-release-dev/ocp-v4.0-art-dev", Mirrors: []configv1.ImageMirror{
			"mirror-a.example:5000/openshift/release"}},
	}
	if !jsonEqual(t, m.Digest, wantDigest) {
		t.Errorf("digest mirrors = %+v, want %+v", m.Digest, wantDigest)
	}
	wantTag := []configv1.ImageTagMirrors{{Source: "quay.io/openshift-release-dev/ocp-v4.0-art-dev",
		Mirrors: []configv1.ImageMirror{"mirror-a.example:5000/openshift/release-tags"}}}
	if !jsonEqual(t, m.Tag, wantTag) {
		t.Errorf("tag mirrors = %+v, want %+v", m.Tag, wantTag)
	}
	if strings.Join(m.Insecure, ",") != "mirror-b.example:5000/openshift/release-images" {
		t.Errorf("insecure = %v", m.Insecure)
	}
}

func TestParseMirrorsRejects(t *testing.T) {
	cases := map[string]struct{ conf, want string }{
		"not TOML":         {conf: "[[registry]\n", want: "not valid TOML"},
		"no registry":      {conf: `unqualified-search-registries = ["x"]`, want: "no [[registry]] table"},
		"no location":      {conf: "[[registry]]\nprefix = \"a\"\n[[registry.mirror]]\nlocation = \"m\"\n", want: "[[registry]] 1 has no location"},
		"no mirror":        {conf: "[[registry]]\nlocation = \"quay.io/a\"\n", want: "registry quay.io/a has no [[registry.mirror]]"},
		"mirror, location": {conf: "[[registry]]\nlocation = \"quay.io/a\"\n[[registry.mirror]]\ninsecure = true\n", want: "mirror 1 of registry quay.io/a has no location"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := ParseMirrors(tc.conf)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want it to say %q", err, tc.want)
			}
		})
	}
}

func TestManifestsData(t *testing.T) {
	const ca = "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n"
	data, err := ManifestsData(&corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: "mirrors"},
		Data:       map[string]string{RegistriesConfKey: ocMirrorConf, CABundleKey: ca},
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(data) != 4 {
		t.Fatalf("keys = %v, want the four manifests", keys(data))
	}
	var idms configv1.ImageDigestMirrorSet
	decode(t, data[DigestMirrorSetKey], &idms)
	if idms.Kind != "ImageDigestMirrorSet" || idms.APIVersion != "config.openshift.io/v1" || idms.Name != MirrorSetName ||
		len(idms.Spec.ImageDigestMirrors) != 2 || len(idms.Spec.ImageDigestMirrors[0].Mirrors) != 2 {
		t.Errorf("IDMS = %s", data[DigestMirrorSetKey])
	}
	var itms configv1.ImageTagMirrorSet
	decode(t, data[TagMirrorSetKey], &itms)
	if itms.Kind != "ImageTagMirrorSet" || itms.Name != MirrorSetName || len(itms.Spec.ImageTagMirrors) != 1 {
		t.Errorf("ITMS = %s", data[TagMirrorSetKey])
	}
	var cm corev1.ConfigMap
	decode(t, data[CertificateConfigMapKey], &cm)
	if cm.Kind != "ConfigMap" || cm.Namespace != "openshift-config" || cm.Name != CertificateConfigMapName || cm.Data[CABundleKey] != ca {
		t.Errorf("certificate ConfigMap = %s", data[CertificateConfigMapKey])
	}
	var img configv1.Image
	decode(t, data[ImageConfigKey], &img)
	if img.Kind != "Image" || img.Name != "cluster" || img.Spec.AdditionalTrustedCA.Name != CertificateConfigMapName ||
		strings.Join(img.Spec.RegistrySources.InsecureRegistries, ",") != "mirror-b.example:5000/openshift/release-images" {
		t.Errorf("image config = %s", data[ImageConfigKey])
	}
}

func TestManifestsDataWithoutCAOrInsecureMirrors(t *testing.T) {
	data, err := ManifestsData(&corev1.ConfigMap{Data: map[string]string{
		RegistriesConfKey: "[[registry]]\nlocation = \"quay.io/a\"\n[[registry.mirror]]\nlocation = \"m.example/a\"\n",
	}})
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(keys(data), ","); got != DigestMirrorSetKey {
		t.Errorf("keys = %s, want only the IDMS: no CA and no insecure mirror need no image config", got)
	}
}

func TestManifestsDataNeedsRegistriesConf(t *testing.T) {
	_, err := ManifestsData(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "mirrors"},
		Data: map[string]string{CABundleKey: "x"}})
	if err == nil || !strings.Contains(err.Error(), `ConfigMap mirrors has no key "registries.conf"`) {
		t.Fatalf("err = %v", err)
	}
}

func keys(m map[string]string) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

func decode(t *testing.T, raw string, into any) {
	t.Helper()
	if err := json.Unmarshal([]byte(raw), into); err != nil {
		t.Fatalf("decode %s: %v", raw, err)
	}
}

func jsonEqual(t *testing.T, a, b any) bool {
	t.Helper()
	ra, _ := json.Marshal(a)
	rb, _ := json.Marshal(b)
	return string(ra) == string(rb)
}
