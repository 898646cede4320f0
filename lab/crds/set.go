package crds

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"sort"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"
)

// Set is a group of CRDs from one source.
type Set struct {
	// Name says what the CRDs are, for progress output and errors.
	Name string
	// Module, when set, reads Files from this Go module's directory.
	Module string
	// ModuleVersion pins Module's version, for a module whose program the
	// lab runs rather than links (its version is not in the build
	// information). Empty means the version this binary was built with.
	ModuleVersion string
	// FS, when Module is empty, is where Files are read from.
	FS fs.FS
	// Files are glob patterns (path.Match syntax) within the source.
	Files []string
	// Labels are added to every CRD of the set, e.g. the Cluster API
	// contract label that tells CAPI which API version to use.
	Labels map[string]string
	// DropUnserved removes versions that are neither served nor stored.
	// The API server keeps a watch cache per version and converts every
	// event into each of them; a conversion webhook that cannot produce an
	// old version (CAPI keeps v1alpha3/v1alpha4 in internal packages) then
	// fails on every event. A fresh hub never stored those versions.
	DropUnserved bool
	// OnlyVersion, when set, keeps only this version of every CRD and
	// stores it, for a cluster that serves one version of a module's API
	// without the conversion webhook its other versions need.
	OnlyVersion string
}

// Load reads and decodes every CRD of the set, sorted by name.
func (s Set) Load() ([]*apiextensionsv1.CustomResourceDefinition, error) {
	fsys, err := s.source()
	if err != nil {
		return nil, err
	}
	var out []*apiextensionsv1.CustomResourceDefinition
	for _, pattern := range s.Files {
		matches, err := fs.Glob(fsys, pattern)
		if err != nil {
			return nil, fmt.Errorf("CRD set %s: bad pattern %q: %w", s.Name, pattern, err)
		}
		if len(matches) == 0 {
			return nil, fmt.Errorf("CRD set %s: no file matches %q", s.Name, pattern)
		}
		for _, m := range matches {
			crds, err := decodeFile(fsys, m)
			if err != nil {
				return nil, fmt.Errorf("CRD set %s: %w", s.Name, err)
			}
			out = append(out, crds...)
		}
	}
	for _, crd := range out {
		s.label(crd)
		if s.DropUnserved {
			dropUnserved(crd)
		}
		if s.OnlyVersion != "" {
			if err := keepOnly(crd, s.OnlyVersion); err != nil {
				return nil, fmt.Errorf("CRD set %s: %w", s.Name, err)
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

func (s Set) source() (fs.FS, error) {
	if s.Module == "" {
		if s.FS == nil {
			return nil, fmt.Errorf("CRD set %s: neither Module nor FS is set", s.Name)
		}
		return s.FS, nil
	}
	dir, err := s.moduleDir()
	if err != nil {
		return nil, fmt.Errorf("CRD set %s: %w", s.Name, err)
	}
	return os.DirFS(dir), nil
}

func (s Set) moduleDir() (string, error) {
	if s.ModuleVersion != "" {
		return ModuleDirAt(s.Module, s.ModuleVersion)
	}
	return ModuleDir(s.Module)
}

func (s Set) label(crd *apiextensionsv1.CustomResourceDefinition) {
	if len(s.Labels) == 0 {
		return
	}
	if crd.Labels == nil {
		crd.Labels = map[string]string{}
	}
	for k, v := range s.Labels {
		crd.Labels[k] = v
	}
}

func dropUnserved(crd *apiextensionsv1.CustomResourceDefinition) {
	kept := crd.Spec.Versions[:0]
	for _, v := range crd.Spec.Versions {
		if v.Served || v.Storage {
			kept = append(kept, v)
		}
	}
	crd.Spec.Versions = kept
}

// keepOnly leaves one served and stored version and no conversion.
func keepOnly(crd *apiextensionsv1.CustomResourceDefinition, version string) error {
	for _, v := range crd.Spec.Versions {
		if v.Name == version {
			v.Served, v.Storage = true, true
			crd.Spec.Versions = []apiextensionsv1.CustomResourceDefinitionVersion{v}
			crd.Spec.Conversion = nil
			return nil
		}
	}
	return fmt.Errorf("CRD %s has no version %s", crd.Name, version)
}

// decodeFile reads every CRD document of a (possibly multi-document) YAML file.
func decodeFile(fsys fs.FS, name string) ([]*apiextensionsv1.CustomResourceDefinition, error) {
	raw, err := fs.ReadFile(fsys, name)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", name, err)
	}
	reader := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(raw)))
	var out []*apiextensionsv1.CustomResourceDefinition
	for {
		doc, err := reader.Read()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, fmt.Errorf("split %s: %w", name, err)
		}
		if len(bytes.TrimSpace(doc)) == 0 {
			continue
		}
		// Skip other kinds before the strict decode, which would refuse
		// their fields.
		var meta struct{ Kind string }
		if err := yaml.Unmarshal(doc, &meta); err != nil {
			return nil, fmt.Errorf("decode %s: %w", path.Base(name), err)
		}
		if meta.Kind != "CustomResourceDefinition" {
			continue
		}
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := yaml.UnmarshalStrict(doc, crd); err != nil {
			return nil, fmt.Errorf("decode %s: %w", path.Base(name), err)
		}
		out = append(out, crd)
	}
}
