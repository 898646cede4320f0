package controlplane

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"

	"k8s.io/client-go/rest"

	"github.com/paritylab/paritylab/lab/process"
	"github.com/paritylab/paritylab/lab/state"
)

// ControlPlane is a running local control plane.
type ControlPlane struct {
	opts       Options
	files      files
	creds      *credentials
	server     string
	kubeconfig []byte
	restConfig *rest.Config

	// processes in start order; Stop ends them in reverse.
	processes []*process.Process

	stopOnce sync.Once
	stopErr  error
}

// Start brings up etcd, then kube-apiserver, then (if asked) the
// kube-controller-manager, each checked healthy before the next starts. On
// failure everything already started is stopped and Dir removed.
func Start(ctx context.Context, opts Options) (_ *ControlPlane, retErr error) {
	if err := opts.defaults(); err != nil {
		return nil, err
	}
	cp := &ControlPlane{opts: opts, files: files{dir: filepath.Join(opts.Dir, "pki")}}
	if err := cp.createDir(); err != nil {
		return nil, err
	}
	defer func() {
		if retErr != nil {
			retErr = errors.Join(retErr, cp.Stop())
		}
	}()
	creds, err := writePKI(cp.files, opts.Name, opts.ExtraSANs)
	if err != nil {
		return nil, err
	}
	cp.creds = creds
	etcdURL, err := cp.startEtcd(ctx)
	if err != nil {
		return nil, err
	}
	if err := cp.startAPIServer(ctx, etcdURL); err != nil {
		return nil, err
	}
	if opts.ControllerManager {
		if err := cp.startControllerManager(ctx); err != nil {
			return nil, err
		}
	}
	return cp, nil
}

func (cp *ControlPlane) createDir() error {
	if err := os.MkdirAll(cp.opts.Dir, 0o700); err != nil {
		return fmt.Errorf("create control plane dir: %w", err)
	}
	return cp.opts.Tracker.Track(state.DirResource(cp.opts.Dir))
}

// run starts one supervised component and records it.
func (cp *ControlPlane) run(ctx context.Context, spec process.Spec) error {
	spec.Name = cp.opts.Name + "-" + spec.Name
	spec.LogPath = filepath.Join(cp.opts.LogDir, spec.Name+".log")
	spec.ReadyTimeout = cp.opts.StartTimeout
	spec.Logger = cp.opts.Logger
	spec.OnStart = func(id process.Identity) error {
		return cp.opts.Tracker.Track(state.ProcessResource(id))
	}
	p, err := process.Start(ctx, spec)
	if err != nil {
		return err
	}
	cp.processes = append(cp.processes, p)
	return nil
}

// Server is the API server URL, https://127.0.0.1:<port>.
func (cp *ControlPlane) Server() string { return cp.server }

// RESTConfig returns admin credentials. Each call returns a new copy.
func (cp *ControlPlane) RESTConfig() *rest.Config { return rest.CopyConfig(cp.restConfig) }

// Kubeconfig returns the admin kubeconfig.
func (cp *ControlPlane) Kubeconfig() []byte { return append([]byte(nil), cp.kubeconfig...) }

// KubeconfigPath is where the admin kubeconfig is written (0600).
func (cp *ControlPlane) KubeconfigPath() string { return filepath.Join(cp.opts.Dir, "kubeconfig") }

// Dir is the control plane's directory.
func (cp *ControlPlane) Dir() string { return cp.opts.Dir }

// LogDir is where component logs are written.
func (cp *ControlPlane) LogDir() string { return cp.opts.LogDir }

// Stop ends every component in reverse start order and removes Dir. It is
// safe to call twice and after a failed Start.
func (cp *ControlPlane) Stop() error {
	cp.stopOnce.Do(func() {
		var errs []error
		for i := len(cp.processes) - 1; i >= 0; i-- {
			p := cp.processes[i]
			if err := p.Stop(); err != nil {
				errs = append(errs, err)
				continue
			}
			errs = append(errs, cp.opts.Tracker.Forget(state.ProcessResource(p.Identity())))
		}
		if err := os.RemoveAll(cp.opts.Dir); err != nil {
			errs = append(errs, fmt.Errorf("remove control plane dir: %w", err))
		} else {
			errs = append(errs, cp.opts.Tracker.Forget(state.DirResource(cp.opts.Dir)))
		}
		cp.stopErr = errors.Join(errs...)
	})
	return cp.stopErr
}
