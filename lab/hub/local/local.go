package local

import (
	"context"
	"errors"

	"github.com/go-logr/logr"
	"k8s.io/client-go/rest"

	"github.com/paritylab/paritylab/lab/controlplane"
	"github.com/paritylab/paritylab/lab/hub"
	"github.com/paritylab/paritylab/lab/ports"
	"github.com/paritylab/paritylab/lab/state"
)

// BackendName is what Backend returns.
const BackendName = "local"

// Options configure a local hub. Dir is required.
type Options struct {
	// Dir holds the hub's certificates, etcd data and kubeconfig; Dispose
	// removes it.
	Dir string
	// LogDir receives kube-apiserver and etcd logs. Default Dir/logs.
	LogDir string
	// Tracker records processes and directories for crash recovery.
	Tracker state.Tracker
	// Logger receives progress. Default discard.
	Logger logr.Logger
}

type localHub struct {
	opts Options
	cp   *controlplane.ControlPlane
}

var _ hub.Hub = (*localHub)(nil)

// New returns a local hub; nothing runs until Create.
func New(opts Options) hub.Hub {
	return &localHub{opts: opts}
}

func (h *localHub) Backend() string { return BackendName }

func (h *localHub) Create(ctx context.Context) error {
	if h.cp != nil {
		return errors.New("local hub: already created")
	}
	cp, err := controlplane.Start(ctx, controlplane.Options{
		Name:   "hub",
		Dir:    h.opts.Dir,
		LogDir: h.opts.LogDir,
		// Owner-reference garbage collection and namespace deletion, as
		// on any real management cluster: CAPI and the assisted flow
		// rely on cascading deletion.
		ControllerManager: true,
		Controllers:       []string{"garbagecollector", "namespace"},
		Tracker:           h.opts.Tracker,
		Logger:            h.opts.Logger,
	})
	if err != nil {
		return err
	}
	h.cp = cp
	return nil
}

func (h *localHub) RESTConfig() *rest.Config {
	if h.cp == nil {
		return nil
	}
	return h.cp.RESTConfig()
}

func (h *localHub) Kubeconfig() ([]byte, error) {
	if h.cp == nil {
		return nil, errors.New("local hub: not created")
	}
	return h.cp.Kubeconfig(), nil
}

// WebhookHost is loopback: the API server runs on this machine.
func (h *localHub) WebhookHost() string { return ports.Loopback }

func (h *localHub) Dispose(context.Context) error {
	if h.cp == nil {
		return nil
	}
	return h.cp.Stop()
}
