package kind

import (
	"bytes"
	"errors"
	"fmt"
	"time"

	"sigs.k8s.io/kind/pkg/apis/config/v1alpha4"
	"sigs.k8s.io/kind/pkg/cluster"
	kindexec "sigs.k8s.io/kind/pkg/exec"
	kindlog "sigs.k8s.io/kind/pkg/log"
)

// createRequest is everything Create hands to kind.
type createRequest struct {
	Name   string
	Config *v1alpha4.Cluster
	// Image overrides the image of every node.
	Image        string
	WaitForReady time.Duration
	// KubeconfigPath is the file kind merges the cluster's kubeconfig into.
	KubeconfigPath string
}

// clusterProvider is the part of kind's *cluster.Provider the hub uses; tests
// substitute a fake.
type clusterProvider interface {
	Create(req createRequest) error
	// KubeConfig returns the cluster's kubeconfig; internal selects the
	// in-network address instead of the host endpoint.
	KubeConfig(name string, internal bool) (string, error)
	// Delete removes the cluster's nodes and its entry in kubeconfigPath.
	Delete(name, kubeconfigPath string) error
	// List names the clusters that have nodes.
	List() ([]string, error)
}

// newProviderFunc returns a provider that logs to logger.
type newProviderFunc func(logger kindlog.Logger) (clusterProvider, error)

// newKindProvider detects a container engine and returns kind's provider for
// it. It fails, without falling back to docker the way cluster.NewProvider
// does, when no engine is installed.
func newKindProvider(logger kindlog.Logger) (clusterProvider, error) {
	engine, err := cluster.DetectNodeProvider()
	if err != nil {
		return nil, fmt.Errorf("%w: kind found none of docker, podman, nerdctl: %w", ErrNoContainerEngine, err)
	}
	return kindProvider{p: cluster.NewProvider(engine, cluster.ProviderWithLogger(logger))}, nil
}

// kindProvider adapts *cluster.Provider to clusterProvider.
type kindProvider struct {
	p *cluster.Provider
}

func (k kindProvider) Create(req createRequest) error {
	return k.p.Create(req.Name,
		cluster.CreateWithV1Alpha4Config(req.Config),
		cluster.CreateWithNodeImage(req.Image),
		cluster.CreateWithWaitForReady(req.WaitForReady),
		cluster.CreateWithKubeconfigPath(req.KubeconfigPath),
		cluster.CreateWithDisplayUsage(false),
		cluster.CreateWithDisplaySalutation(false),
	)
}

func (k kindProvider) KubeConfig(name string, internal bool) (string, error) {
	return k.p.KubeConfig(name, internal)
}

func (k kindProvider) Delete(name, kubeconfigPath string) error {
	return k.p.Delete(name, kubeconfigPath)
}

func (k kindProvider) List() ([]string, error) {
	return k.p.List()
}

// withCommandOutput appends the output of the failed engine command inside
// err, if any (kind's errors name the command but not what it printed, which
// is where "Cannot connect to the Docker daemon" is).
func withCommandOutput(err error) error {
	var runErr *kindexec.RunError
	if !errors.As(err, &runErr) {
		runErr = kindexec.RunErrorForError(err)
	}
	if runErr == nil {
		return err
	}
	out := bytes.TrimSpace(runErr.Output)
	if len(out) == 0 {
		return err
	}
	return fmt.Errorf("%w: %s", err, out)
}
