package controlplane

import (
	"errors"
	"path/filepath"
	"time"

	"github.com/go-logr/logr"

	"github.com/paritylab/paritylab/lab/ports"
	"github.com/paritylab/paritylab/lab/state"
)

// Options configure a control plane. Dir is required; every other zero value
// works.
type Options struct {
	// Name prefixes component names in logs and the ledger, e.g. "hub".
	// Default "controlplane".
	Name string
	// Dir holds certificates, etcd data and kubeconfigs. It is created, and
	// removed by Stop. Required.
	Dir string
	// LogDir receives one log file per component (<name>-etcd.log, ...).
	// Default Dir/logs, removed with Dir; set it to keep logs.
	LogDir string
	// ExtraSANs are added to the API server certificate, e.g. the QEMU
	// user-mode gateway 10.0.2.2 through which VMs reach host loopback.
	ExtraSANs []string
	// AuthorizationModes is kube-apiserver's --authorization-mode list.
	// Default RBAC; a workload cluster uses Node,RBAC as a real cluster does.
	AuthorizationModes []string
	// AdmissionPlugins are enabled in addition to kube-apiserver's default
	// set, e.g. NodeRestriction. Default none.
	AdmissionPlugins []string
	// AuditedResources are core-group resources (e.g. nodes) whose writes
	// the API server records in its audit log (AuditLogPath), at the
	// Request level (request bodies: never resources that hold secrets);
	// writes to their subresources (nodes/status) are not recorded.
	// Default none, and no audit log.
	AuditedResources []string
	// ControllerManager also runs kube-controller-manager.
	ControllerManager bool
	// Controllers is kube-controller-manager's --controllers list.
	// Default: node lifecycle, namespace and garbage collection, the ones a
	// lab cluster without kubelets and pods needs.
	Controllers []string
	// CSRSigning makes kube-controller-manager sign approved
	// CertificateSigningRequests of the kubernetes.io signers with the
	// cluster CA (its csrsigning controller): how kubelets that bootstrap
	// get their client certificates. It needs ControllerManager.
	CSRSigning bool
	// NodeMonitorGracePeriod is how long a Node may go without a heartbeat
	// before it is marked NotReady. Default: the upstream default.
	NodeMonitorGracePeriod time.Duration
	// StartTimeout bounds each component's readiness wait. Default 60s.
	StartTimeout time.Duration
	// Tracker records processes and directories for crash recovery.
	// Default state.Discard.
	Tracker state.Tracker
	// Logger receives progress at V(1). Default discard.
	Logger logr.Logger

	// pickPort picks each component's port: ports.Free (tests hand out
	// a taken one first).
	pickPort func() (int, error)
}

func (o *Options) defaults() error {
	if o.pickPort == nil {
		o.pickPort = ports.Free
	}
	if o.Dir == "" {
		return errors.New("control plane options: Dir is required")
	}
	if o.Name == "" {
		o.Name = "controlplane"
	}
	if o.LogDir == "" {
		o.LogDir = filepath.Join(o.Dir, "logs")
	}
	if len(o.AuthorizationModes) == 0 {
		o.AuthorizationModes = []string{"RBAC"}
	}
	if len(o.Controllers) == 0 {
		o.Controllers = []string{"nodelifecycle", "namespace", "garbagecollector", "serviceaccount-token"}
	}
	if o.StartTimeout == 0 {
		o.StartTimeout = 60 * time.Second
	}
	if o.Tracker == nil {
		o.Tracker = state.Discard
	}
	if o.Logger.GetSink() == nil {
		o.Logger = logr.Discard()
	}
	return nil
}
