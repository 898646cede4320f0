package capm3

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/client-go/rest"

	"github.com/paritylab/paritylab/lab/binaries"
	"github.com/paritylab/paritylab/lab/controllers"
	"github.com/paritylab/paritylab/lab/ports"
	"github.com/paritylab/paritylab/lab/process"
	"github.com/paritylab/paritylab/lab/state"
)

// ComponentName names the manager in logs, the ledger and webhook
// configuration names.
const ComponentName = "capm3"

// Backend is how reports name the infrastructure provider.
func Backend() string { return ComponentName + " " + binaries.CAPM3Version }

// Options configure the manager. RESTConfig, Kubeconfig, Dir and LogDir are
// required.
type Options struct {
	// RESTConfig reaches the hub as an administrator; CRDs and webhook
	// configurations are installed with it.
	RESTConfig *rest.Config
	// Kubeconfig is the hub's admin kubeconfig; the manager reads it from
	// a 0600 file in Dir.
	Kubeconfig []byte
	// Dir holds the manager's kubeconfig and webhook serving certificate.
	Dir string
	// LogDir receives capm3.log.
	LogDir string
	// Tracker records the process and Dir for `lab down`. Default: none.
	Tracker state.Tracker
	// Binary is the manager to run. Default: the one `make deps` builds.
	Binary string
	// ReadyTimeout bounds each wait of the start: CRDs served, manager
	// ready, webhooks called. Default 2m.
	ReadyTimeout time.Duration
	// Logger receives lifecycle messages. Default: discard.
	Logger logr.Logger
}

func (o *Options) defaults() error {
	switch {
	case o.RESTConfig == nil:
		return errors.New("capm3: RESTConfig is required")
	case len(o.Kubeconfig) == 0:
		return errors.New("capm3: Kubeconfig is required")
	case o.Dir == "" || o.LogDir == "":
		return errors.New("capm3: Dir and LogDir are required")
	}
	if o.Binary == "" {
		path, err := binaries.Path(binaries.CAPM3)
		if err != nil {
			return err
		}
		o.Binary = path
	}
	if o.Tracker == nil {
		o.Tracker = state.Discard
	}
	if o.ReadyTimeout <= 0 {
		o.ReadyTimeout = 2 * time.Minute
	}
	if o.Logger.GetSink() == nil {
		o.Logger = logr.Discard()
	}
	return nil
}

// Manager is the running CAPM3 controller manager.
type Manager struct {
	opts Options
	proc *process.Process
}

// Start installs CAPM3's CRDs, starts its manager and installs its webhook
// configurations, and returns once the API server calls the webhooks. On
// error nothing it started keeps running.
func Start(ctx context.Context, opts Options) (_ *Manager, retErr error) {
	if err := opts.defaults(); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(opts.Dir, 0o700); err != nil {
		return nil, fmt.Errorf("create %s: %w", opts.Dir, err)
	}
	if err := opts.Tracker.Track(state.DirResource(opts.Dir)); err != nil {
		return nil, err
	}
	m := &Manager{opts: opts}
	defer func() {
		if retErr != nil {
			retErr = errors.Join(retErr, m.Stop())
		}
	}()
	ep, err := controllers.NewWebhookEndpoint(ports.Loopback, filepath.Join(opts.Dir, "webhook"))
	if err != nil {
		return nil, err
	}
	if err := installCRDs(opts, ep); err != nil {
		return nil, err
	}
	if err := m.startProcess(ctx, ep); err != nil {
		return nil, err
	}
	if err := installWebhooks(ctx, opts, ep); err != nil {
		return nil, err
	}
	return m, nil
}

// startProcess runs the manager with its listeners on loopback (but the
// webhook server, see the package documentation) until /readyz answers.
func (m *Manager) startProcess(ctx context.Context, ep controllers.WebhookEndpoint) error {
	kubeconfig := filepath.Join(m.opts.Dir, "kubeconfig")
	if err := os.WriteFile(kubeconfig, m.opts.Kubeconfig, 0o600); err != nil {
		return fmt.Errorf("write capm3 kubeconfig: %w", err)
	}
	free, err := ports.FreeN(2)
	if err != nil {
		return err
	}
	health := ports.Loopback + ":" + strconv.Itoa(free[0])
	proc, err := process.Start(ctx, process.Spec{
		Name: ComponentName,
		Path: m.opts.Binary,
		Args: []string{
			"--kubeconfig=" + kubeconfig,
			"--webhook-port=" + strconv.Itoa(ep.Port),
			"--webhook-cert-dir=" + filepath.Join(m.opts.Dir, "webhook"),
			"--health-addr=" + health,
			"--diagnostics-address=" + ports.Loopback + ":" + strconv.Itoa(free[1]),
			"--insecure-diagnostics",
		},
		LogPath:      filepath.Join(m.opts.LogDir, ComponentName+".log"),
		Ready:        process.HTTPReady(http.DefaultClient, "http://"+health+"/readyz", "ok"),
		ReadyTimeout: m.opts.ReadyTimeout,
		OnStart: func(id process.Identity) error {
			return m.opts.Tracker.Track(state.ProcessResource(id))
		},
		Logger: m.opts.Logger,
	})
	if err != nil {
		return err
	}
	m.proc = proc
	return nil
}

// Identity is the manager process, nil once stopped.
func (m *Manager) Identity() *process.Identity {
	if m.proc == nil {
		return nil
	}
	id := m.proc.Identity()
	return &id
}

// Stop ends the manager, removes Dir (its kubeconfig and key) and forgets
// what Start recorded. The CRDs and webhook configurations stay with the
// hub, which goes with the lab.
func (m *Manager) Stop() error {
	var errs []error
	if m.proc != nil {
		id := m.proc.Identity()
		if err := m.proc.Stop(); err != nil {
			return err // still running: keep its record for lab down
		}
		errs = append(errs, m.opts.Tracker.Forget(state.ProcessResource(id)))
		m.proc = nil
	}
	if err := os.RemoveAll(m.opts.Dir); err != nil {
		return errors.Join(append(errs, fmt.Errorf("remove %s: %w", m.opts.Dir, err))...)
	}
	errs = append(errs, m.opts.Tracker.Forget(state.DirResource(m.opts.Dir)))
	return errors.Join(errs...)
}

// Exited is closed when the manager process ends.
func (m *Manager) Exited() <-chan struct{} { return m.proc.Exited() }
