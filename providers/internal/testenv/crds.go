package testenv

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"

	"github.com/paritylab/paritylab/providers/config"
)

// crds gathers every CRD the providers' tests need.
func crds(clusterVersion bool) ([]*apiextensionsv1.CustomResourceDefinition, error) {
	capiDir, err := moduleDir("sigs.k8s.io/cluster-api")
	if err != nil {
		return nil, err
	}
	sets := []config.Manifests{
		{Name: "Cluster API core", FS: os.DirFS(capiDir), CRDs: []string{"config/crd/bases/*.yaml"}},
		{Name: "hive", FS: os.DirFS(filepath.Join(repoRoot(), "lab", "crds", "generated")), CRDs: []string{
			"hive.openshift.io_clusterdeployments.yaml", "hive.openshift.io_clusterimagesets.yaml",
		}},
		config.Assisted(), config.Bootstrap(), config.ControlPlane(), config.Agent(),
	}
	if clusterVersion {
		dir, err := moduleDir("github.com/openshift/api")
		if err != nil {
			return nil, err
		}
		sets = append(sets, config.Manifests{Name: "OpenShift ClusterVersion", FS: os.DirFS(dir), CRDs: []string{
			"config/v1/zz_generated.crd-manifests/0000_00_cluster-version-operator_01_clusterversions-Default.crd.yaml",
		}})
	}
	all := infraCRDs()
	for _, s := range sets {
		loaded, err := s.LoadCRDs()
		if err != nil {
			return nil, err
		}
		for _, crd := range loaded {
			dropUnserved(crd)
		}
		all = append(all, loaded...)
	}
	return all, nil
}

// dropUnserved removes versions neither served nor stored: Cluster API
// keeps its v1alpha3/v1alpha4 conversion in internal packages, and a fresh
// API server never stored them.
func dropUnserved(crd *apiextensionsv1.CustomResourceDefinition) {
	kept := crd.Spec.Versions[:0]
	for _, v := range crd.Spec.Versions {
		if v.Served || v.Storage {
			kept = append(kept, v)
		}
	}
	crd.Spec.Versions = kept
}

// moduleDir asks the go command for a dependency's directory (test
// binaries carry no build information to read it from).
func moduleDir(path string) (string, error) {
	var stdout, stderr bytes.Buffer
	cmd := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", path)
	cmd.Dir = repoRoot()
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("find module %s: %w: %s", path, err, strings.TrimSpace(stderr.String()))
	}
	dir := strings.TrimSpace(stdout.String())
	if dir == "" {
		return "", fmt.Errorf("find module %s: not downloaded (run `go mod download %s`)", path, path)
	}
	return dir, nil
}
