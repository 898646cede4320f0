package kind

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/kind/pkg/apis/config/defaults"

	"github.com/paritylab/paritylab/lab/hub"
)

// BackendName is what Backend returns.
const BackendName = "kind"

const (
	// DefaultName is the kind cluster name when Options.Name is empty.
	DefaultName = "paritylab"
	// DefaultImage is the node image when Options.Image is empty: kind's own
	// default for the kind release in go.mod.
	DefaultImage = defaults.Image
	// DefaultWaitForReady bounds the wait for the control plane to become
	// ready when Options.WaitForReady is zero.
	DefaultWaitForReady = 5 * time.Minute
)

var (
	// ErrNoContainerEngine is wrapped by Create's error when no container
	// engine kind supports is installed or the installed one does not answer.
	ErrNoContainerEngine = errors.New("no container engine available")
	// ErrClusterExists is wrapped by Create's error when a kind cluster of the
	// same name already exists; Create leaves it alone.
	ErrClusterExists = errors.New("a kind cluster with that name already exists")
)

// Options configure a kind hub. The zero value works: a one-node cluster
// named DefaultName on kind's default node image.
type Options struct {
	// Name is the kind cluster name. Default DefaultName.
	Name string
	// Image is the node image of every node. Default DefaultImage.
	Image string
	// Workers is the number of worker nodes besides the control-plane node.
	// Default 0.
	Workers int
	// KubeconfigPath, when set, receives the admin kubeconfig (mode 0600);
	// Dispose removes it. The user's own kubeconfig is never touched.
	KubeconfigPath string
	// WaitForReady bounds the wait for the control plane to become ready.
	// Default DefaultWaitForReady.
	WaitForReady time.Duration
	// Logger receives progress, kind's included. Default discard.
	Logger logr.Logger
}

type kindHub struct {
	opts        Options
	newProvider newProviderFunc

	provider clusterProvider
	// provisioned is set once kind was asked to create the cluster: from
	// then on the cluster is ours and Dispose deletes it.
	provisioned bool
	// scratchDir holds the kubeconfig kind merges into, so that it never
	// writes the user's.
	scratchDir string
	// wroteKubeconfig is set once Options.KubeconfigPath was written.
	wroteKubeconfig bool
	kubeconfig      []byte
	restConfig      *rest.Config
}

var _ hub.Hub = (*kindHub)(nil)

// New returns a kind hub; nothing runs until Create.
func New(opts Options) hub.Hub {
	return newHub(opts, newKindProvider)
}

func newHub(opts Options, newProvider newProviderFunc) *kindHub {
	if opts.Name == "" {
		opts.Name = DefaultName
	}
	if opts.Image == "" {
		opts.Image = DefaultImage
	}
	if opts.WaitForReady == 0 {
		opts.WaitForReady = DefaultWaitForReady
	}
	if opts.Logger.GetSink() == nil {
		opts.Logger = logr.Discard()
	}
	return &kindHub{opts: opts, newProvider: newProvider}
}

func (h *kindHub) Backend() string { return BackendName }

// Create checks that a container engine answers and that no cluster of the
// name exists, then creates the cluster and waits for its control plane.
// kind offers no cancellation: ctx is checked before creation starts, and
// Options.WaitForReady bounds the wait.
func (h *kindHub) Create(ctx context.Context) error {
	name := h.opts.Name
	if h.provisioned {
		return fmt.Errorf("create kind cluster %s: already created", name)
	}
	if h.opts.Workers < 0 {
		return fmt.Errorf("create kind cluster %s: negative worker count %d", name, h.opts.Workers)
	}
	if err := h.preflight(); err != nil {
		return fmt.Errorf("create kind cluster %s: %w", name, err)
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("create kind cluster %s: %w", name, err)
	}
	if err := h.create(); err != nil {
		return fmt.Errorf("create kind cluster %s: %w", name, err)
	}
	return nil
}

// preflight finds a container engine, checks that it answers and that the
// cluster does not exist yet. It changes nothing.
func (h *kindHub) preflight() error {
	if h.provider == nil {
		p, err := h.newProvider(newLogAdapter(h.opts.Logger))
		if err != nil {
			return err
		}
		h.provider = p
	}
	clusters, err := h.provider.List()
	if err != nil {
		return fmt.Errorf("%w: an engine client is installed but the engine does not answer: %w", ErrNoContainerEngine, withCommandOutput(err))
	}
	if slices.Contains(clusters, h.opts.Name) {
		return ErrClusterExists
	}
	return nil
}

func (h *kindHub) create() error {
	scratch, err := os.MkdirTemp("", "paritylab-kind-")
	if err != nil {
		return fmt.Errorf("scratch kubeconfig directory: %w", err)
	}
	h.scratchDir = scratch

	h.opts.Logger.Info("creating kind cluster", "name", h.opts.Name, "image", h.opts.Image,
		"workers", h.opts.Workers)
	h.provisioned = true
	err = h.provider.Create(createRequest{
		Name:           h.opts.Name,
		Config:         clusterConfig(h.opts.Name, h.opts.Image, h.opts.Workers),
		Image:          h.opts.Image,
		WaitForReady:   h.opts.WaitForReady,
		KubeconfigPath: h.scratchKubeconfig(),
	})
	if err != nil {
		return withCommandOutput(err)
	}

	raw, err := h.provider.KubeConfig(h.opts.Name, false)
	if err != nil {
		return fmt.Errorf("get kubeconfig: %w", withCommandOutput(err))
	}
	restConfig, err := restConfigFor([]byte(raw))
	if err != nil {
		return err
	}
	if h.opts.KubeconfigPath != "" {
		if err := writeKubeconfig(h.opts.KubeconfigPath, []byte(raw)); err != nil {
			return err
		}
		h.wroteKubeconfig = true
	}
	h.kubeconfig = []byte(raw)
	h.restConfig = restConfig
	h.opts.Logger.Info("kind cluster ready", "name", h.opts.Name, "host", restConfig.Host)
	return nil
}

func (h *kindHub) scratchKubeconfig() string {
	if h.scratchDir == "" {
		return ""
	}
	return filepath.Join(h.scratchDir, "kubeconfig")
}

func (h *kindHub) RESTConfig() *rest.Config {
	if h.restConfig == nil {
		return nil
	}
	return rest.CopyConfig(h.restConfig)
}

func (h *kindHub) Kubeconfig() ([]byte, error) {
	if h.kubeconfig == nil {
		return nil, fmt.Errorf("kind cluster %s: not created", h.opts.Name)
	}
	return slices.Clone(h.kubeconfig), nil
}

// WebhookHost is "": providers run inside the cluster, and the cluster's API
// server cannot reach webhook servers of this process.
func (h *kindHub) WebhookHost() string { return "" }

// Dispose deletes the cluster if Create got as far as asking kind for it, a
// cluster that no longer exists counting as deleted, and removes the files
// Create wrote. It never deletes a cluster that existed before Create.
func (h *kindHub) Dispose(context.Context) error {
	name := h.opts.Name
	if h.provisioned {
		if err := h.deleteCluster(); err != nil {
			return fmt.Errorf("delete kind cluster %s: %w", name, err)
		}
		h.provisioned = false
	}
	h.kubeconfig, h.restConfig = nil, nil
	var errs []error
	if h.wroteKubeconfig {
		if err := os.Remove(h.opts.KubeconfigPath); err != nil && !errors.Is(err, os.ErrNotExist) {
			errs = append(errs, err)
		} else {
			h.wroteKubeconfig = false
		}
	}
	if h.scratchDir != "" {
		if err := os.RemoveAll(h.scratchDir); err != nil {
			errs = append(errs, err)
		} else {
			h.scratchDir = ""
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("dispose kind cluster %s: %w", name, err)
	}
	return nil
}

func (h *kindHub) deleteCluster() error {
	clusters, err := h.provider.List()
	if err != nil {
		return fmt.Errorf("list clusters: %w", withCommandOutput(err))
	}
	if !slices.Contains(clusters, h.opts.Name) {
		return nil
	}
	h.opts.Logger.Info("deleting kind cluster", "name", h.opts.Name)
	return withCommandOutput(h.provider.Delete(h.opts.Name, h.scratchKubeconfig()))
}

// restConfigFor parses kubeconfig and checks that its API server is on
// loopback, where the cluster config binds it.
func restConfigFor(kubeconfig []byte) (*rest.Config, error) {
	cfg, err := clientcmd.RESTConfigFromKubeConfig(kubeconfig)
	if err != nil {
		return nil, fmt.Errorf("parse kubeconfig: %w", err)
	}
	u, err := url.Parse(cfg.Host)
	if err != nil {
		return nil, fmt.Errorf("parse API server address %q: %w", cfg.Host, err)
	}
	if ip := net.ParseIP(u.Hostname()); ip == nil || !ip.IsLoopback() {
		return nil, fmt.Errorf("API server %s is not on loopback", cfg.Host)
	}
	return cfg, nil
}

// writeKubeconfig writes data to path with mode 0600, replacing any file
// there whatever its mode.
func writeKubeconfig(path string, data []byte) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return fmt.Errorf("write kubeconfig: %w", err)
	}
	f, err := os.CreateTemp(dir, ".kubeconfig-*")
	if err != nil {
		return fmt.Errorf("write kubeconfig: %w", err)
	}
	tmp := f.Name()
	_, werr := f.Write(data)
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = os.Chmod(tmp, 0o600)
	}
	if werr == nil {
		werr = os.Rename(tmp, path)
	}
	if werr != nil {
		_ = os.Remove(tmp)
		return fmt.Errorf("write kubeconfig %s: %w", path, werr)
	}
	return nil
}
