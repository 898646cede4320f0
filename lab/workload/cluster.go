package workload

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"sync"

	configv1 "github.com/openshift/api/config/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/paritylab/paritylab/lab/controlplane"
	"github.com/paritylab/paritylab/lab/crds"
	"github.com/paritylab/paritylab/lab/workload/cvo"
)

// Cluster is a running workload cluster.
type Cluster struct {
	opts Options
	cp   *controlplane.ControlPlane
	cvo  *cvo.Operator

	stopOnce sync.Once
	stopErr  error
}

// Start brings up the control plane, installs the OpenShift APIs, creates
// the singletons of an installed cluster and starts the simulated
// cluster-version operator. On failure everything already started is
// stopped and Dir removed.
func Start(ctx context.Context, opts Options) (_ *Cluster, retErr error) {
	if err := opts.defaults(); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, 4*opts.StartTimeout)
	defer cancel()
	cp, err := controlplane.Start(ctx, opts.controlPlane())
	if err != nil {
		return nil, fmt.Errorf("start workload cluster %s: %w", opts.Name, err)
	}
	c := &Cluster{opts: opts, cp: cp}
	defer func() {
		if retErr != nil {
			retErr = errors.Join(retErr, c.Stop())
		}
	}()
	if err := crds.Install(cp.RESTConfig(), crds.InstallInput{Sets: crdSets(), Timeout: opts.StartTimeout}); err != nil {
		return nil, fmt.Errorf("workload cluster %s: %w", opts.Name, err)
	}
	cl, err := c.client()
	if err != nil {
		return nil, err
	}
	if err := c.createSingletons(ctx, cl); err != nil {
		return nil, fmt.Errorf("workload cluster %s: %w", opts.Name, err)
	}
	c.cvo, err = cvo.Start(ctx, cvo.Options{
		RESTConfig:      cp.RESTConfig(),
		UpgradeDuration: opts.UpgradeDuration,
		Releases:        opts.Releases,
		Payloads:        opts.Payloads,
		Logger:          opts.Logger.WithName("cluster-version-operator"),
	})
	if err != nil {
		return nil, fmt.Errorf("workload cluster %s: %w", opts.Name, err)
	}
	opts.Logger.V(1).Info("workload cluster up", "name", opts.Name, "server", cp.Server())
	return c, nil
}

func (o Options) controlPlane() controlplane.Options {
	return controlplane.Options{
		Name:      o.Name,
		Dir:       o.Dir,
		LogDir:    o.LogDir,
		ExtraSANs: []string{GuestGateway},
		// As in a real cluster: kubelets (here lab node agents) are
		// authorized by the Node authorizer and confined to their own
		// Node and Lease by NodeRestriction.
		AuthorizationModes: []string{"Node", "RBAC"},
		AdmissionPlugins:   []string{"NodeRestriction"},
		// Scenarios read who changed a Node, and which changes the
		// server refused (a remediation's lost restore).
		AuditedResources:  []string{"nodes"},
		ControllerManager: true,
		// Workers that join through the machine API bootstrap their
		// kubelet identity with a CSR, as in OpenShift.
		CSRSigning:             true,
		NodeMonitorGracePeriod: o.NodeMonitorGracePeriod,
		StartTimeout:           o.StartTimeout,
		Tracker:                o.Tracker,
		Logger:                 o.Logger,
	}
}

// Scheme holds the Kubernetes and config.openshift.io types, for clients of
// a workload cluster.
func Scheme() (*runtime.Scheme, error) {
	s := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(s); err != nil {
		return nil, fmt.Errorf("register Kubernetes types: %w", err)
	}
	if err := configv1.Install(s); err != nil {
		return nil, fmt.Errorf("register config.openshift.io types: %w", err)
	}
	return s, nil
}

func (c *Cluster) client() (client.Client, error) {
	s, err := Scheme()
	if err != nil {
		return nil, err
	}
	cl, err := client.New(c.cp.RESTConfig(), client.Options{Scheme: s})
	if err != nil {
		return nil, fmt.Errorf("create workload cluster client: %w", err)
	}
	return cl, nil
}

// Name is the cluster's name.
func (c *Cluster) Name() string { return c.opts.Name }

// Server is the API server URL for host processes, https://127.0.0.1:<port>.
func (c *Cluster) Server() string { return c.cp.Server() }

// GuestServer is the API server URL for lab VMs, https://10.0.2.2:<port>.
func (c *Cluster) GuestServer() string {
	u, err := url.Parse(c.cp.Server())
	if err != nil {
		return "" // the control plane made the URL; it parses
	}
	u.Host = GuestGateway + ":" + u.Port()
	return u.String()
}

// RESTConfig returns admin credentials for host processes. Each call returns
// a new copy.
func (c *Cluster) RESTConfig() *rest.Config { return c.cp.RESTConfig() }

// Kubeconfig returns the admin kubeconfig for host processes.
func (c *Cluster) Kubeconfig() []byte { return c.cp.Kubeconfig() }

// KubeconfigPath is where the admin kubeconfig for host processes is
// written (0600).
func (c *Cluster) KubeconfigPath() string { return c.cp.KubeconfigPath() }

// Dir is the cluster's directory.
func (c *Cluster) Dir() string { return c.cp.Dir() }

// AuditLogPath is the API server's audit log of Node writes
// (controlplane.ReadAuditLog reads it).
func (c *Cluster) AuditLogPath() string { return c.cp.AuditLogPath() }

// LogDir is where component logs are written.
func (c *Cluster) LogDir() string { return c.cp.LogDir() }

// ClusterID is the ClusterVersion's spec.clusterID.
func (c *Cluster) ClusterID() string { return c.opts.ClusterID }

// InfrastructureName is the Infrastructure's status.infrastructureName.
func (c *Cluster) InfrastructureName() string { return c.opts.InfrastructureName }

// Stop ends the cluster-version operator and every control-plane process
// and removes Dir. It is safe to call twice and after a failed Start.
func (c *Cluster) Stop() error {
	c.stopOnce.Do(func() {
		var errs []error
		if c.cvo != nil {
			errs = append(errs, c.cvo.Stop())
		}
		errs = append(errs, c.cp.Stop())
		c.stopErr = errors.Join(errs...)
	})
	return c.stopErr
}
