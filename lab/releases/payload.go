package releases

import (
	"archive/tar"
	"bytes"
	"encoding/json"
	"fmt"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/static"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/paritylab/paritylab/providers/controlplane/release"
)

// MetadataPath is the release's Cincinnati metadata in the image.
const MetadataPath = "release-manifests/release-metadata"

// ReleaseLabel is the release image's config label naming its version.
const ReleaseLabel = "io.openshift.release"

// BuildVersionsAnnotation is the image-references tag annotation listing
// the versions a component was built from.
const BuildVersionsAnnotation = "io.openshift.build.versions"

// Metadata is release-manifests/release-metadata.
type Metadata struct {
	Kind     string            `json:"kind"`
	Version  string            `json:"version"`
	Previous []string          `json:"previous,omitempty"`
	Metadata map[string]string `json:"metadata,omitempty"`
}

// metadataKind is the only kind of release metadata upstream writes.
const metadataKind = "cincinnati-metadata-v0"

// ImageReferences is release-manifests/image-references.
type ImageReferences struct {
	Kind       string `json:"kind"`
	APIVersion string `json:"apiVersion"`
	Metadata   struct {
		Name string `json:"name"`
	} `json:"metadata"`
	Spec struct {
		Tags []Tag `json:"tags"`
	} `json:"spec"`
}

// Tag is a component of a release.
type Tag struct {
	Name        string            `json:"name"`
	Annotations map[string]string `json:"annotations,omitempty"`
	From        struct {
		Kind string `json:"kind"`
		Name string `json:"name"`
	} `json:"from"`
}

// file is one regular file of a layer.
type file struct {
	path string
	data []byte
}

// layer is a tar layer of files, uncompressed as `oc` reads it either way.
func layer(files ...file) (v1.Layer, error) {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, f := range files {
		hdr := &tar.Header{Name: f.path, Mode: 0o644, Size: int64(len(f.data)), Typeflag: tar.TypeReg}
		if err := tw.WriteHeader(hdr); err != nil {
			return nil, fmt.Errorf("tar %s: %w", f.path, err)
		}
		if _, err := tw.Write(f.data); err != nil {
			return nil, fmt.Errorf("tar %s: %w", f.path, err)
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	return static.NewLayer(buf.Bytes(), types.OCILayer), nil
}

// image is an OCI image of one layer of files with config labels.
func image(labels map[string]string, files ...file) (v1.Image, error) {
	l, err := layer(files...)
	if err != nil {
		return nil, err
	}
	img := mutate.MediaType(empty.Image, types.OCIManifestSchema1)
	img = mutate.ConfigMediaType(img, types.OCIConfigJSON)
	img, err = mutate.AppendLayers(img, l)
	if err != nil {
		return nil, err
	}
	cfg, err := img.ConfigFile()
	if err != nil {
		return nil, err
	}
	cfg = cfg.DeepCopy()
	cfg.Architecture, cfg.OS = "amd64", "linux"
	cfg.Config.Labels = labels
	return mutate.ConfigFile(img, cfg)
}

// componentImage is a component's image for a release: its build versions
// in a label and a file, so that each version's differs.
func componentImage(c Component, r Release) (v1.Image, error) {
	versions := c.buildVersions(r)
	return image(map[string]string{BuildVersionsAnnotation: versions, "io.openshift.build.source-location": "paritylab"},
		file{path: "usr/share/paritylab/component", data: fmt.Appendf(nil, "%s %s %s\n", c.Name, r.Version, versions)})
}

// releaseImage is the release payload whose image-references point at
// components (name to image by digest).
func releaseImage(r Release, components []Component, refs map[string]string) (v1.Image, error) {
	meta, err := json.Marshal(Metadata{Kind: metadataKind, Version: r.Version, Previous: r.Previous,
		Metadata: map[string]string{"url": "https://paritylab.invalid/releases/" + r.Version}})
	if err != nil {
		return nil, err
	}
	is := ImageReferences{Kind: "ImageStream", APIVersion: "image.openshift.io/v1"}
	is.Metadata.Name = r.Version
	for _, c := range components {
		t := Tag{Name: c.Name}
		if v := c.buildVersions(r); v != "" {
			t.Annotations = map[string]string{BuildVersionsAnnotation: v}
		}
		t.From.Kind, t.From.Name = "DockerImage", refs[c.Name]
		is.Spec.Tags = append(is.Spec.Tags, t)
	}
	imageRefs, err := json.Marshal(is)
	if err != nil {
		return nil, err
	}
	return image(map[string]string{ReleaseLabel: r.Version},
		file{path: MetadataPath, data: meta}, file{path: release.ImageReferencesPath, data: imageRefs})
}
