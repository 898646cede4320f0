package lab

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/paritylab/paritylab/lab/assisted"
	"github.com/paritylab/paritylab/lab/binaries"
	"github.com/paritylab/paritylab/lab/capm3"
	"github.com/paritylab/paritylab/lab/controllers"
	"github.com/paritylab/paritylab/lab/hub"
	"github.com/paritylab/paritylab/lab/hypershift"
	"github.com/paritylab/paritylab/lab/logs"
	"github.com/paritylab/paritylab/lab/ports"
	"github.com/paritylab/paritylab/lab/process"
	"github.com/paritylab/paritylab/lab/registry"
	"github.com/paritylab/paritylab/lab/releases"
	"github.com/paritylab/paritylab/lab/state"
	"github.com/paritylab/paritylab/lab/workload"
)

// Ledger value keys, read by Status and by Down from another process.
const (
	valueProfile    = "profile"
	valueKubeconfig = "kubeconfig"
	valueServer     = "hubServer"
	valueOwner      = "owner"
	valueReady      = "ready"
	valueLogDir     = "logDir"
	valueAccel      = "accel"
	valueBMC        = "bmc"
)

// Lab is a running lab.
type Lab struct {
	opts    Options
	runID   string
	lock    *lock
	ledger  *state.Ledger
	logFile io.Closer

	hub         hub.Hub
	controllers *controllers.Host
	closeOnStop []io.Closer
	client      client.Client
	hostsLayer  hostsLayer
	inventory   *Inventory
	spokes      *spokes
	assisted    *assisted.Service
	hypershift  *hypershift.Operator
	capm3       *capm3.Manager
	registry    *registry.Registry
	releases    []releases.Pushed
	site        *mirrorSite

	done []step // steps that ran, for undo
}

// step is one stage of Up.
type step struct {
	name string
	do   func(ctx context.Context) error
	undo func(ctx context.Context) error
}

// Up brings a lab up. On failure or cancellation it undoes what it did and
// returns the error; nothing of the run is left behind.
func Up(ctx context.Context, opts Options) (*Lab, error) {
	if err := opts.defaults(); err != nil {
		return nil, err
	}
	l := &Lab{opts: opts, runID: newRunID()}
	for _, s := range l.steps() {
		if err := l.run(ctx, s); err != nil {
			return nil, errors.Join(err, l.Down(context.WithoutCancel(ctx)))
		}
	}
	if err := l.ledger.SetValue(valueReady, time.Now().UTC().Format(time.RFC3339)); err != nil {
		return nil, errors.Join(err, l.Down(context.WithoutCancel(ctx)))
	}
	return l, nil
}

func (l *Lab) steps() []step {
	steps := []step{
		{name: "Recording the run", do: l.record, undo: l.unrecord},
		{name: l.registryStepName(), do: l.startRegistry, undo: l.stopRegistry},
		{name: "Starting a disconnected site's registries (the source, on " + ports.Unrouted + ", and its oc-mirror mirror)", do: l.startMirrorSite, undo: l.stopMirrorSite},
		{name: "Starting the hub (etcd, kube-apiserver, kube-controller-manager)", do: l.startHub, undo: l.stopHub},
		{name: "Installing CRDs, starting Cluster API controllers and webhooks", do: l.startControllers, undo: l.stopControllers},
		{name: "Starting CAPM3 " + binaries.CAPM3Version + " (upstream manager, its CRDs and webhooks)", do: l.startCAPM3, undo: l.stopCAPM3},
	}
	return append(steps, l.hostSteps()...)
}

func (l *Lab) run(ctx context.Context, s step) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("%s: %w", s.name, err)
	}
	l.opts.Progress.Started(s.name)
	l.opts.Logger.Info("Step started", "step", s.name)
	start := time.Now()
	err := s.do(ctx)
	if s.undo != nil {
		// A step that failed half-way still undoes what it did.
		l.done = append(l.done, s)
	}
	took := time.Since(start)
	l.opts.Progress.Finished(s.name, took, err)
	if err != nil {
		l.opts.Logger.Error(err, "Step failed", "step", s.name, "took", took)
		return fmt.Errorf("%s: %w", s.name, err)
	}
	l.opts.Logger.Info("Step finished", "step", s.name, "took", took)
	return nil
}

// record takes the lock, opens the ledger and the lab log.
func (l *Lab) record(context.Context) error {
	lk, err := acquireLock(l.opts.StateDir)
	if err != nil {
		return err
	}
	l.lock = lk
	if l.opts.Logger.GetSink() == nil {
		logger, f, err := logs.File(filepath.Join(l.opts.LogDir, "lab.log"), 1)
		if err != nil {
			return err
		}
		l.opts.Logger, l.logFile = logger.WithValues("run", l.runID), f
	}
	ledger, err := state.Create(ledgerPath(l.opts.StateDir), l.runID)
	if err != nil {
		return err
	}
	l.ledger = ledger
	owner, err := process.IdentityOf("paritylab", os.Getpid())
	if err != nil {
		return err
	}
	return errors.Join(
		ledger.SetValue(valueProfile, l.opts.Profile),
		ledger.SetValue(valueOwner, encodeIdentity(owner)),
		ledger.SetValue(valueLogDir, l.opts.LogDir),
	)
}

func (l *Lab) unrecord(ctx context.Context) error {
	var errs []error
	if l.ledger != nil {
		errs = append(errs, l.ledger.Reap(ctx))
		errs = append(errs, l.ledger.Remove())
	}
	if l.logFile != nil {
		errs = append(errs, l.logFile.Close())
	}
	if err := errors.Join(errs...); err != nil {
		return err
	}
	return removeStateDir(l.opts.StateDir)
}

// removeStateDir removes the state dir with the lock in it. A LogDir outside
// it is the caller's to keep.
func removeStateDir(stateDir string) error {
	if err := os.RemoveAll(stateDir); err != nil {
		return fmt.Errorf("remove state dir: %w", err)
	}
	return nil
}

func newRunID() string {
	b := make([]byte, 3)
	_, _ = rand.Read(b)
	return "pl-" + hex.EncodeToString(b)
}

// RunID names the run; lab objects carry it.
func (l *Lab) RunID() string { return l.runID }

// Hub is the management cluster.
func (l *Lab) Hub() hub.Hub { return l.hub }

// RESTConfig reaches the hub as admin.
func (l *Lab) RESTConfig() *rest.Config { return l.hub.RESTConfig() }

// Client is an uncached client of the hub that knows every lab API type:
// what it reads is what the API server holds at that moment.
func (l *Lab) Client() client.Client { return l.client }

// KubeconfigPath is the hub admin kubeconfig (0600).
func (l *Lab) KubeconfigPath() string { return filepath.Join(l.opts.StateDir, "kubeconfig") }

// StateDir holds the run's ledger, lock and data.
func (l *Lab) StateDir() string { return l.opts.StateDir }

// Assisted is the lab's assisted service.
func (l *Lab) Assisted() *assisted.Service { return l.assisted }

// Workload returns the workload cluster installed for a ClusterDeployment,
// or nil.
func (l *Lab) Workload(namespace, name string) *workload.Cluster {
	return l.spokes.Cluster(assisted.ClusterKey{Namespace: namespace, Name: name})
}

// HostedCluster returns the hosted control plane of the HostedCluster
// namespace/name, or nil while none runs (or the lab runs no hosted
// clusters, Options.HostedClusters).
func (l *Lab) HostedCluster(namespace, name string) *workload.Cluster {
	if l.hypershift == nil {
		return nil
	}
	return l.hypershift.HostedAPI(types.NamespacedName{Namespace: namespace, Name: name})
}

// Inventory lists the run's hosts; nil when the lab has none.
func (l *Lab) Inventory() *Inventory { return l.inventory }

// LogDir is where component logs are written.
func (l *Lab) LogDir() string { return l.opts.LogDir }

// Logger is the lab's structured logger.
func (l *Lab) Logger() logr.Logger { return l.opts.Logger }

// Down undoes every step of Up in reverse order, then reaps anything the
// ledger still lists. Safe to call twice.
func (l *Lab) Down(ctx context.Context) error {
	var errs []error
	for i := len(l.done) - 1; i >= 0; i-- {
		s := l.done[i]
		l.opts.Progress.Started("Undo: " + s.name)
		start := time.Now()
		err := s.undo(ctx)
		l.opts.Progress.Finished("Undo: "+s.name, time.Since(start), err)
		if err != nil {
			errs = append(errs, fmt.Errorf("undo %s: %w", s.name, err))
		}
	}
	l.done = nil
	l.lock.release()
	return errors.Join(errs...)
}
