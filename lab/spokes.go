package lab

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"github.com/go-logr/logr"
	configv1 "github.com/openshift/api/config/v1"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/paritylab/paritylab/lab/assisted"
	"github.com/paritylab/paritylab/lab/assisted/agentapi"
	"github.com/paritylab/paritylab/lab/binaries"
	"github.com/paritylab/paritylab/lab/controlplane"
	"github.com/paritylab/paritylab/lab/images"
	"github.com/paritylab/paritylab/lab/mapi"
	"github.com/paritylab/paritylab/lab/metal3"
	"github.com/paritylab/paritylab/lab/releases"
	"github.com/paritylab/paritylab/lab/state"
	"github.com/paritylab/paritylab/lab/workload"
	"github.com/paritylab/paritylab/lab/workload/cvo"
	"github.com/paritylab/paritylab/providers/controlplane/release"
)

// spokes are the workload clusters installs create, one local control plane
// each, recorded in the run's ledger, each with its machine API running
// once its install is done.
type spokes struct {
	stateDir, logDir string
	tracker          state.Tracker
	machineAPI       machineAPIDeps
	// releases are the registry's releases: a spoke's ClusterVersion
	// names the image of its version there.
	releases []releases.Pushed

	mu       sync.Mutex
	clusters map[assisted.ClusterKey]*spoke
}

var _ assisted.Spokes = (*spokes)(nil)

// machineAPIDeps are what the spokes' machine APIs share with the hub:
// the image store, the agent binary of node images and the deployer of
// the same hosts.
type machineAPIDeps struct {
	images   *images.Store
	agent    string
	deployer metal3.Deployer
	logger   logr.Logger
	// machineController, when set, is the upstream bare-metal machine
	// controller binary each machine API runs (Options.MachineController).
	machineController string
	// tracker records its processes for lab down.
	tracker state.Tracker
}

func newSpokes(stateDir, logDir string, tracker state.Tracker, deps machineAPIDeps, rels []releases.Pushed) *spokes {
	return &spokes{stateDir: stateDir, logDir: logDir, tracker: tracker, machineAPI: deps, releases: rels, clusters: map[assisted.ClusterKey]*spoke{}}
}

// release is the release a cluster installs: the image its
// ClusterImageSet names, when the assisted service read it (the
// installer's ClusterVersion starts there, wherever that is: a site's
// source, read through mirrors); else the lab registry's release of the
// version, by digest; a version the registry lacks keeps workload's
// stand-in image, which names an .invalid registry.
func (s *spokes) release(rel configv1.Release) configv1.Release {
	if rel.Image != "" {
		return rel
	}
	version := rel.Version
	if p, err := FindRelease(s.releases, version); err == nil {
		return configv1.Release{Version: p.Version, Image: p.Image}
	}
	return workload.LabRelease(version)
}

func spokeName(key assisted.ClusterKey) string { return key.Namespace + "-" + key.Name }

func spokeLogDir(logDir string, key assisted.ClusterKey) string {
	return filepath.Join(logDir, "spokes", spokeName(key))
}

// SpokeAuditLog is the audit log of Node writes of the workload cluster
// of the cluster key, in a lab that logs into logDir.
func SpokeAuditLog(logDir string, key assisted.ClusterKey) string {
	return controlplane.AuditLogPath(spokeLogDir(logDir, key), spokeName(key))
}

func (s *spokes) Create(ctx context.Context, key assisted.ClusterKey, rel configv1.Release) (assisted.Spoke, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if sp, ok := s.clusters[key]; ok {
		return sp, nil
	}
	name := spokeName(key)
	c, err := workload.Start(ctx, workload.Options{
		Name: name, Dir: filepath.Join(s.stateDir, "spokes", name), LogDir: spokeLogDir(s.logDir, key),
		Release: s.release(rel), Tracker: s.tracker,
		// The operator retrieves an update's payload from its registry.
		Payloads: &release.Remote{Dial: hubDial},
	})
	if err != nil {
		return nil, fmt.Errorf("start workload cluster %s: %w", key, err)
	}
	sp, err := newSpoke(c, s.machineAPI, s.releases)
	if err != nil {
		return nil, errors.Join(err, c.Stop())
	}
	s.clusters[key] = sp
	return sp, nil
}

func (s *spokes) Get(key assisted.ClusterKey) assisted.Spoke {
	s.mu.Lock()
	defer s.mu.Unlock()
	if sp, ok := s.clusters[key]; ok {
		return sp
	}
	return nil
}

// Cluster returns a workload cluster itself, for scenarios and tests.
func (s *spokes) Cluster(key assisted.ClusterKey) *workload.Cluster {
	s.mu.Lock()
	defer s.mu.Unlock()
	if sp, ok := s.clusters[key]; ok {
		return sp.c
	}
	return nil
}

func (s *spokes) Delete(_ context.Context, key assisted.ClusterKey) error {
	s.mu.Lock()
	sp, ok := s.clusters[key]
	delete(s.clusters, key)
	s.mu.Unlock()
	if !ok {
		return nil
	}
	return sp.stop()
}

// stopAll stops every workload cluster (lab teardown).
func (s *spokes) stopAll(ctx context.Context) error {
	s.mu.Lock()
	keys := make([]assisted.ClusterKey, 0, len(s.clusters))
	for k := range s.clusters {
		keys = append(keys, k)
	}
	s.mu.Unlock()
	var errs []error
	for _, k := range keys {
		errs = append(errs, s.Delete(ctx, k))
	}
	return errors.Join(errs...)
}

// spoke adapts a workload cluster to what the assisted service needs.
type spoke struct {
	c     *workload.Cluster
	port  int
	caPEM []byte
	deps  machineAPIDeps
	// client reads the cluster's ClusterVersion; releases are the
	// registry's, for the Kubernetes of the release it is at.
	client   client.Client
	releases []releases.Pushed

	// mu guards machineAPI, which runs once the install is done.
	mu         sync.Mutex
	machineAPI *mapi.MachineAPI
}

// stop ends the machine API, then the cluster it works on.
func (s *spoke) stop() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	var errs []error
	if s.machineAPI != nil {
		errs = append(errs, s.machineAPI.Stop())
		s.machineAPI = nil
	}
	return errors.Join(append(errs, s.c.Stop())...)
}

// StartMachineAPI runs the machine API against the installed spoke, as
// machine-api-operator comes up in an installed cluster, after the
// installer's machine API objects for the installed hosts exist.
func (s *spoke) StartMachineAPI(ctx context.Context, installed []assisted.InstalledHost) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.machineAPI != nil {
		return nil
	}
	m, err := s.startMachineAPI(ctx, installed)
	if err != nil {
		return err
	}
	s.machineAPI = m
	return nil
}

// AddInstalledHost records a day-2 host in the running machine API.
func (s *spoke) AddInstalledHost(ctx context.Context, host assisted.Day2Host) error {
	s.mu.Lock()
	m := s.machineAPI
	s.mu.Unlock()
	if m == nil {
		return fmt.Errorf("the machine API of %s is not running", s.c.Name())
	}
	return m.AddInstalledHost(ctx, host)
}

// startMachineAPI starts the machine API. Its workers join with the
// cluster's shared bootstrap credential, which the machine API writes
// into worker-user-data as the installer would.
func (s *spoke) startMachineAPI(ctx context.Context, installed []assisted.InstalledHost) (*mapi.MachineAPI, error) {
	cert, key, err := kubeconfigCredentials(s.c.IssueBootstrapKubeconfig(""))
	if err != nil {
		return nil, fmt.Errorf("bootstrap credential of %s: %w", s.c.Name(), err)
	}
	d, sp := s.deps, s
	return mapi.Start(ctx, mapi.Options{
		RESTConfig: sp.c.RESTConfig(), Deployer: d.deployer, Images: d.images, Agent: d.agent,
		InfrastructureName: sp.c.InfrastructureName(), Installed: installed,
		WorkerNodeConfig: agentapi.NodeConfig{
			APIPort: sp.port, TLSServerName: sp.TLSServerName(), CACert: string(sp.caPEM),
			ClientCert: string(cert), ClientKey: string(key), Bootstrap: true, KubeletVersion: sp.KubernetesVersion(),
		},
		Metal3: metal3.Options{
			// Lab guests do not act on the ACPI power button.
			SoftPowerOffTimeout: 5 * time.Second,
			// A lab guest boots in seconds, not minutes: a host powered
			// off out of band (a failed worker) is powered back on only at
			// the next steady-state check, which must not come before a
			// MachineHealthCheck has seen the Node fail.
			PollInterval: 10 * time.Minute,
		},
		MachineController: sp.externalMachineController(),
		// Removed with the cluster's directory.
		WebhookCertDir: filepath.Join(sp.c.Dir(), "machine-api-webhooks"),
		Logger:         d.logger.WithValues("cluster", sp.c.Name()),
	})
}

// externalMachineController runs the upstream machine controller binary,
// when the lab has one, against this cluster with its admin kubeconfig,
// logging next to the cluster's own components.
func (s *spoke) externalMachineController() *mapi.ExternalController {
	if s.deps.machineController == "" {
		return nil
	}
	return &mapi.ExternalController{
		Binary: s.deps.machineController, Kubeconfig: s.c.KubeconfigPath(),
		LogPath: filepath.Join(s.c.LogDir(), mapi.ExternalControllerName+".log"), Tracker: s.deps.tracker,
	}
}

func newSpoke(c *workload.Cluster, deps machineAPIDeps, rels []releases.Pushed) (*spoke, error) {
	u, err := url.Parse(c.Server())
	if err != nil {
		return nil, err
	}
	port, err := strconv.Atoi(u.Port())
	if err != nil {
		return nil, fmt.Errorf("workload API port: %w", err)
	}
	cfg, err := clientcmd.Load(c.Kubeconfig())
	if err != nil {
		return nil, err
	}
	var ca []byte
	for _, cl := range cfg.Clusters {
		ca = cl.CertificateAuthorityData
	}
	scheme, err := workload.Scheme()
	if err != nil {
		return nil, err
	}
	cl, err := client.New(c.RESTConfig(), client.Options{Scheme: scheme})
	if err != nil {
		return nil, fmt.Errorf("workload client: %w", err)
	}
	return &spoke{c: c, port: port, caPEM: ca, deps: deps, client: cl, releases: rels}, nil
}

func (s *spoke) APIPort() int               { return s.port }
func (s *spoke) TLSServerName() string      { return "kubernetes" }
func (s *spoke) CACertPEM() []byte          { return s.caPEM }
func (s *spoke) AdminKubeconfig() []byte    { return s.c.Kubeconfig() }
func (s *spoke) InfrastructureName() string { return s.c.InfrastructureName() }

// KubernetesVersion is the kubelet a node joining the cluster now runs:
// the Kubernetes of the release the cluster is at, as the real cluster's
// machine-config server gives a new node the current config before its
// kubelet starts. The lab's own Kubernetes before the ClusterVersion says
// otherwise, or for a release the lab did not push.
func (s *spoke) KubernetesVersion() string {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cv := &configv1.ClusterVersion{}
	if err := s.client.Get(ctx, client.ObjectKey{Name: cvo.Name}, cv); err != nil {
		return binaries.KubernetesVersion
	}
	if p, err := FindRelease(s.releases, cv.Status.Desired.Version); err == nil {
		return "v" + p.Kubernetes
	}
	return binaries.KubernetesVersion
}

func (s *spoke) NodeCredentials(node string) ([]byte, []byte, error) {
	cert, key, err := kubeconfigCredentials(s.c.IssueNodeKubeconfig(node, ""))
	if err != nil {
		return nil, nil, fmt.Errorf("node kubeconfig of %s: %w", node, err)
	}
	return cert, key, nil
}

// kubeconfigCredentials is the client certificate and key of a kubeconfig.
func kubeconfigCredentials(raw []byte, err error) ([]byte, []byte, error) {
	if err != nil {
		return nil, nil, err
	}
	cfg, err := clientcmd.Load(raw)
	if err != nil {
		return nil, nil, err
	}
	for _, user := range cfg.AuthInfos {
		return user.ClientCertificateData, user.ClientKeyData, nil
	}
	return nil, nil, errors.New("kubeconfig has no credentials")
}
