package imageregistry

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/BurntSushi/toml"
	configv1 "github.com/openshift/api/config/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Keys of the ConfigMap imageRegistryRef names.
const (
	RegistriesConfKey = "registries.conf"
	CABundleKey       = "ca-bundle.crt"
)

// ManifestsConfigMapName is the ConfigMap of extra install manifests this
// package's data goes into, one per namespace.
const ManifestsConfigMapName = "additional-registry-config"

// Names of what the manifests create in the installed cluster.
const (
	// MirrorSetName names the ImageDigestMirrorSet and ImageTagMirrorSet.
	MirrorSetName = "additional-registry"
	// CertificateConfigMapName is the CA's ConfigMap in openshift-config.
	CertificateConfigMapName = "additional-registry-certificate"
	// CertificateNamespace is where that ConfigMap goes.
	CertificateNamespace = "openshift-config"
	// ImageConfigName is the cluster-wide image configuration's name.
	ImageConfigName = "cluster"
)

// Keys of ManifestsConfigMapName, one manifest each.
const (
	DigestMirrorSetKey      = "image-digest-mirror-set.json"
	TagMirrorSetKey         = "image-tag-mirror-set.json"
	CertificateConfigMapKey = "additional-registry-certificate.json"
	ImageConfigKey          = "image-config.json"
)

// pullFromMirrorTagOnly is the pull-from-mirror value that puts a mirror
// into the ImageTagMirrorSet rather than the ImageDigestMirrorSet.
const pullFromMirrorTagOnly = "tag-only"

// Mirrors is what registries.conf says about mirrors.
type Mirrors struct {
	// Digest are the mirrors used for pulls by digest, per source.
	Digest []configv1.ImageDigestMirrors
	// Tag are the pull-from-mirror = "tag-only" mirrors, per source.
	Tag []configv1.ImageTagMirrors
	// Insecure are the mirrors marked insecure = true, in order.
	Insecure []string
}

// registriesFile is the part of registries.conf read here.
type registriesFile struct {
	Registries []struct {
		Location *string `toml:"location"`
		Mirrors  []struct {
			Location       *string `toml:"location"`
			Insecure       bool    `toml:"insecure"`
			PullFromMirror string  `toml:"pull-from-mirror"`
		} `toml:"mirror"`
	} `toml:"registry"`
}

// ParseMirrors reads the mirrors of a registries.conf. Every [[registry]]
// must have a location and at least one mirror, and there must be one
// mirror at least; the mirrors of a source keep their order.
func ParseMirrors(conf string) (*Mirrors, error) {
	var file registriesFile
	if _, err := toml.Decode(conf, &file); err != nil {
		return nil, fmt.Errorf("registries.conf is not valid TOML: %w", err)
	}
	if len(file.Registries) == 0 {
		return nil, errors.New("registries.conf has no [[registry]] table")
	}
	out := &Mirrors{}
	for i, reg := range file.Registries {
		if reg.Location == nil {
			return nil, fmt.Errorf("registries.conf: [[registry]] %d has no location", i+1)
		}
		source := *reg.Location
		if len(reg.Mirrors) == 0 {
			return nil, fmt.Errorf("registries.conf: registry %s has no [[registry.mirror]]", source)
		}
		var digest configv1.ImageDigestMirrors
		var tag configv1.ImageTagMirrors
		for j, m := range reg.Mirrors {
			if m.Location == nil {
				return nil, fmt.Errorf("registries.conf: mirror %d of registry %s has no location", j+1, source)
			}
			if m.Insecure {
				out.Insecure = append(out.Insecure, *m.Location)
			}
			if m.PullFromMirror == pullFromMirrorTagOnly {
				tag.Source = source
				tag.Mirrors = append(tag.Mirrors, configv1.ImageMirror(*m.Location))
				continue
			}
			digest.Source = source
			digest.Mirrors = append(digest.Mirrors, configv1.ImageMirror(*m.Location))
		}
		if len(tag.Mirrors) > 0 {
			out.Tag = append(out.Tag, tag)
		}
		if len(digest.Mirrors) > 0 {
			out.Digest = append(out.Digest, digest)
		}
	}
	return out, nil
}

// ManifestsData is the data of ManifestsConfigMapName for the registry
// ConfigMap registries: one key per manifest, JSON.
func ManifestsData(registries *corev1.ConfigMap) (map[string]string, error) {
	conf, ok := registries.Data[RegistriesConfKey]
	if !ok {
		return nil, fmt.Errorf("ConfigMap %s has no key %q: put the mirrors' registries.conf there", registries.Name, RegistriesConfKey)
	}
	mirrors, err := ParseMirrors(conf)
	if err != nil {
		return nil, fmt.Errorf("ConfigMap %s: %w", registries.Name, err)
	}
	ca, hasCA := registries.Data[CABundleKey]
	var manifests []manifest
	if len(mirrors.Digest) > 0 {
		manifests = append(manifests, manifest{DigestMirrorSetKey, digestMirrorSet(mirrors.Digest)})
	}
	if len(mirrors.Tag) > 0 {
		manifests = append(manifests, manifest{TagMirrorSetKey, tagMirrorSet(mirrors.Tag)})
	}
	if hasCA {
		manifests = append(manifests, manifest{CertificateConfigMapKey, certificateConfigMap(ca)})
	}
	if hasCA || len(mirrors.Insecure) > 0 {
		manifests = append(manifests, manifest{ImageConfigKey, imageConfig(hasCA, mirrors.Insecure)})
	}
	data := map[string]string{}
	for _, m := range manifests {
		raw, err := json.Marshal(m.object)
		if err != nil {
			return nil, fmt.Errorf("encode %s: %w", m.key, err)
		}
		data[m.key] = string(raw)
	}
	return data, nil
}

type manifest struct {
	key    string
	object any
}

func digestMirrorSet(mirrors []configv1.ImageDigestMirrors) *configv1.ImageDigestMirrorSet {
	return &configv1.ImageDigestMirrorSet{
		TypeMeta:   metav1.TypeMeta{APIVersion: configv1.GroupVersion.String(), Kind: "ImageDigestMirrorSet"},
		ObjectMeta: metav1.ObjectMeta{Name: MirrorSetName},
		Spec:       configv1.ImageDigestMirrorSetSpec{ImageDigestMirrors: mirrors},
	}
}

func tagMirrorSet(mirrors []configv1.ImageTagMirrors) *configv1.ImageTagMirrorSet {
	return &configv1.ImageTagMirrorSet{
		TypeMeta:   metav1.TypeMeta{APIVersion: configv1.GroupVersion.String(), Kind: "ImageTagMirrorSet"},
		ObjectMeta: metav1.ObjectMeta{Name: MirrorSetName},
		Spec:       configv1.ImageTagMirrorSetSpec{ImageTagMirrors: mirrors},
	}
}

func certificateConfigMap(ca string) *corev1.ConfigMap {
	return &corev1.ConfigMap{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: metav1.ObjectMeta{Name: CertificateConfigMapName, Namespace: CertificateNamespace},
		Data:       map[string]string{CABundleKey: ca},
	}
}

func imageConfig(trustCA bool, insecure []string) *configv1.Image {
	img := &configv1.Image{
		TypeMeta:   metav1.TypeMeta{APIVersion: configv1.GroupVersion.String(), Kind: "Image"},
		ObjectMeta: metav1.ObjectMeta{Name: ImageConfigName},
	}
	if trustCA {
		img.Spec.AdditionalTrustedCA.Name = CertificateConfigMapName
	}
	img.Spec.RegistrySources.InsecureRegistries = insecure
	return img
}
