package workload

import (
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/go-logr/logr"
	configv1 "github.com/openshift/api/config/v1"
	"k8s.io/apimachinery/pkg/util/uuid"
	"k8s.io/apimachinery/pkg/util/version"

	"github.com/paritylab/paritylab/lab/state"
	"github.com/paritylab/paritylab/lab/workload/cvo"
	"github.com/paritylab/paritylab/providers/controlplane/release"
)

// GuestGateway is the address at which a guest on QEMU user-mode networking
// reaches the host's loopback services.
const GuestGateway = "10.0.2.2"

// DefaultVersion is the OpenShift release a workload cluster reports unless
// told otherwise: the one built on Kubernetes 1.34, the version of the lab's
// control-plane binaries.
const DefaultVersion = "4.21.0"

// Options configure a workload cluster. The zero value works.
type Options struct {
	// Name of the cluster, in component names, logs, the ledger and the
	// infrastructure name. Default "spoke".
	Name string
	// Dir holds the control plane's certificates, etcd data and
	// kubeconfigs; Stop removes it. Default a new temporary directory.
	Dir string
	// LogDir receives one log file per component. Default Dir/logs,
	// removed with Dir; set it to keep logs.
	LogDir string
	// NodeMonitorGracePeriod is how long a Node may miss heartbeats before
	// kube-controller-manager marks it NotReady. Default 20s: far below
	// the upstream 40s (50s in OpenShift) so that tests and scenarios see a
	// stopped host go NotReady quickly.
	NodeMonitorGracePeriod time.Duration
	// Release the cluster is installed at. Default DefaultVersion with the
	// lab's image for it (LabRelease).
	Release configv1.Release
	// Channel is spec.channel. Default stable-<major>.<minor> of Release.
	Channel string
	// ClusterID is spec.clusterID. Default a random UUID.
	ClusterID string
	// AvailableUpdates is status.availableUpdates: the releases an update
	// by version may name. Default none.
	AvailableUpdates []configv1.Release
	// Releases the lab knows besides AvailableUpdates; an update by image
	// learns its version from them. Default none.
	Releases []configv1.Release
	// Payloads, when set, has the cluster-version operator read an
	// update's release image from its registry before it accepts it (see
	// cvo.Reconciler.Payloads). Default nil: Releases and the graph only.
	Payloads release.Resolver
	// UpgradeDuration is how long an accepted update stays Partial.
	// Default cvo.DefaultUpgradeDuration.
	UpgradeDuration time.Duration
	// InfrastructureName is Infrastructure status.infrastructureName.
	// Default Name plus a random suffix, as the installer makes it.
	InfrastructureName string
	// StartTimeout bounds each start-up wait. Default 60s.
	StartTimeout time.Duration
	// Tracker records processes and directories for crash recovery.
	// Default state.Discard.
	Tracker state.Tracker
	// Logger receives progress at V(1). Default discard.
	Logger logr.Logger
}

func (o *Options) defaults() error {
	if o.Name == "" {
		o.Name = "spoke"
	}
	if o.NodeMonitorGracePeriod == 0 {
		o.NodeMonitorGracePeriod = 20 * time.Second
	}
	if err := o.releaseDefaults(); err != nil {
		return err
	}
	if o.ClusterID == "" {
		o.ClusterID = string(uuid.NewUUID())
	}
	if o.UpgradeDuration == 0 {
		o.UpgradeDuration = cvo.DefaultUpgradeDuration
	}
	if o.InfrastructureName == "" {
		o.InfrastructureName = infraID(o.Name)
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
	return o.dirDefault()
}

// dirDefault comes last: once it made a directory, nothing may fail before
// the control plane owns it.
func (o *Options) dirDefault() error {
	if o.Dir != "" {
		return nil
	}
	dir, err := os.MkdirTemp("", "paritylab-"+o.Name+"-")
	if err != nil {
		return fmt.Errorf("create workload cluster dir: %w", err)
	}
	o.Dir = dir
	return nil
}

func (o *Options) releaseDefaults() error {
	if o.Release.Version == "" {
		o.Release.Version = DefaultVersion
	}
	v, err := version.ParseSemantic(o.Release.Version)
	if err != nil {
		return fmt.Errorf("workload cluster release: %w", err)
	}
	if o.Release.Image == "" {
		o.Release.Image = LabRelease(o.Release.Version).Image
	}
	if o.Channel == "" {
		o.Channel = fmt.Sprintf("stable-%d.%d", v.Major(), v.Minor())
	}
	if len(o.Release.Channels) == 0 {
		o.Release.Channels = []string{o.Channel}
	}
	return nil
}

// infraID makes an infrastructure name the way the installer does: the
// cluster name cut to 21 characters, a dash and five random characters.
func infraID(name string) string {
	base := strings.Map(func(r rune) rune {
		if (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9') {
			return r
		}
		return '-'
	}, strings.ToLower(name))
	base = strings.TrimRight(truncate(base, 21), "-")
	return base + "-" + strings.ToLower(string(uuid.NewUUID())[:5])
}

func truncate(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}
