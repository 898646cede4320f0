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
	"reflect"
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
	// FeatureGated says Files are OpenShift's feature-gated CRD pieces
	// (zz_generated.featuregated-crd-manifests/<crd>/AAA_ungated.yaml, the
	// fields no feature gate guards), which OpenShift's generator merges
	// into the manifests it installs. Each carries the generator's marker
	// annotation "feature-gate.release.openshift.io/", a key with an empty
	// name that the API server refuses; the set drops it.
	FeatureGated bool
	// Overrides are glob patterns of partial CRDs (OpenShift's
	// manual-override-crd-manifests) whose versions' subresources are set on
	// the CRD of the same name, as OpenShift's generator merges
	// them (NodePool's scale subresource lives there). An override of a
	// CRD the set lacks, or of anything but subresources, is an error.
	Overrides []string
	// RenameGroup, when set, gives every CRD of the set the group it maps
	// the CRD's group to (and the name <plural>.<group>), leaving CRDs of
	// groups it does not map alone: HyperShift's private copies of Cluster
	// API's types (lab/hypershift).
	RenameGroup func(group string) (string, bool)
	// ConversionPath, when set, is the path on the lab's webhook host
	// (InstallInput.Conversion) of the conversion webhook of every CRD of
	// the set that serves more than one version. Install otherwise finds
	// convertible kinds in the scheme, which has no kind of a renamed
	// group.
	ConversionPath string
}

// Load reads and decodes every CRD of the set, sorted by name.
func (s Set) Load() ([]*apiextensionsv1.CustomResourceDefinition, error) {
	fsys, err := s.source()
	if err != nil {
		return nil, err
	}
	out, err := decodeGlobs(fsys, s.Files)
	if err != nil {
		return nil, fmt.Errorf("CRD set %s: %w", s.Name, err)
	}
	if err := s.override(fsys, out); err != nil {
		return nil, fmt.Errorf("CRD set %s: %w", s.Name, err)
	}
	for _, crd := range out {
		s.rename(crd)
		s.label(crd)
		if s.FeatureGated {
			delete(crd.Annotations, featureGateMarker)
		}
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

// featureGateMarker is the annotation OpenShift's CRD generator puts on
// feature-gated pieces; its key has no name part.
const featureGateMarker = "feature-gate.release.openshift.io/"

// decodeGlobs decodes every CRD of the files the patterns match; a pattern
// that matches nothing is an error.
func decodeGlobs(fsys fs.FS, patterns []string) ([]*apiextensionsv1.CustomResourceDefinition, error) {
	var out []*apiextensionsv1.CustomResourceDefinition
	for _, pattern := range patterns {
		matches, err := fs.Glob(fsys, pattern)
		if err != nil {
			return nil, fmt.Errorf("bad pattern %q: %w", pattern, err)
		}
		if len(matches) == 0 {
			return nil, fmt.Errorf("no file matches %q", pattern)
		}
		for _, m := range matches {
			crds, err := decodeFile(fsys, m)
			if err != nil {
				return nil, err
			}
			out = append(out, crds...)
		}
	}
	return out, nil
}

// override merges the subresources of the set's Overrides into its CRDs.
func (s Set) override(fsys fs.FS, crds []*apiextensionsv1.CustomResourceDefinition) error {
	if len(s.Overrides) == 0 {
		return nil
	}
	partials, err := decodeGlobs(fsys, s.Overrides)
	if err != nil {
		return fmt.Errorf("overrides: %w", err)
	}
	byName := map[string]*apiextensionsv1.CustomResourceDefinition{}
	for _, crd := range crds {
		byName[crd.Name] = crd
	}
	for _, p := range partials {
		crd := byName[p.Name]
		if crd == nil {
			return fmt.Errorf("override of CRD %s, which the set lacks", p.Name)
		}
		for _, pv := range p.Spec.Versions {
			if err := overrideSubresources(crd, pv); err != nil {
				return err
			}
		}
	}
	return nil
}

func overrideSubresources(crd *apiextensionsv1.CustomResourceDefinition, pv apiextensionsv1.CustomResourceDefinitionVersion) error {
	rest := pv
	rest.Name, rest.Subresources = "", nil
	if !reflect.DeepEqual(rest, apiextensionsv1.CustomResourceDefinitionVersion{}) {
		return fmt.Errorf("override of CRD %s version %s changes more than subresources", crd.Name, pv.Name)
	}
	for i := range crd.Spec.Versions {
		if crd.Spec.Versions[i].Name == pv.Name {
			mergeSubresources(&crd.Spec.Versions[i], pv.Subresources)
			return nil
		}
	}
	return fmt.Errorf("override of CRD %s version %s, which the CRD lacks", crd.Name, pv.Name)
}

// mergeSubresources sets the subresources the override names and keeps
// the others (the override adds NodePool's scale, the CRD has its status).
func mergeSubresources(v *apiextensionsv1.CustomResourceDefinitionVersion, o *apiextensionsv1.CustomResourceSubresources) {
	if o == nil {
		return
	}
	if v.Subresources == nil {
		v.Subresources = &apiextensionsv1.CustomResourceSubresources{}
	}
	if o.Status != nil {
		v.Subresources.Status = o.Status
	}
	if o.Scale != nil {
		v.Subresources.Scale = o.Scale
	}
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

// rename moves a CRD to the group RenameGroup maps its group to.
func (s Set) rename(crd *apiextensionsv1.CustomResourceDefinition) {
	if s.RenameGroup == nil {
		return
	}
	if g, ok := s.RenameGroup(crd.Spec.Group); ok {
		crd.Spec.Group = g
		crd.Name = crd.Spec.Names.Plural + "." + g
	}
}
