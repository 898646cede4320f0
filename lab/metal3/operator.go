package metal3

import (
	"context"
	"errors"
	"sync"

	bmov1alpha1 "github.com/metal3-io/baremetal-operator/apis/metal3.io/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/paritylab/paritylab/lab/controllers"
	"github.com/paritylab/paritylab/lab/crds"
)

// Operator is the lab's bare-metal operator: the BareMetalHost controller
// and the loopback server that hands config drives to BMCs. One Operator
// runs in one manager (the hub's, or a workload cluster's for the machine
// API, which keeps its hosts in openshift-machine-api there).
type Operator struct {
	opts  Options
	media *mediaServer

	mu    sync.Mutex
	setUp bool
}

var _ controllers.Component = (*Operator)(nil)

// New prepares an Operator and binds its config drive port on loopback; it
// serves once its manager starts.
func New(opts Options) (*Operator, error) {
	opts.defaults()
	media, err := newMediaServer(opts.Logger.WithName("configdrive"))
	if err != nil {
		return nil, err
	}
	return &Operator{opts: opts, media: media}, nil
}

// Name implements controllers.Component.
func (*Operator) Name() string { return "metal3" }

// AddToScheme registers the types the controller reads and writes.
func (*Operator) AddToScheme(s *runtime.Scheme) error {
	return errors.Join(corev1.AddToScheme(s), bmov1alpha1.AddToScheme(s))
}

// CRDs implements controllers.Component: the metal3 set.
func (*Operator) CRDs() []crds.Set { return []crds.Set{crds.Metal3()} }

// Webhooks implements controllers.Component: none (BMO's validating
// webhook is not part of the lab).
func (*Operator) Webhooks() (*controllers.WebhookConfigurations, error) { return nil, nil }

// WebhooksReady implements controllers.Component: no webhooks.
func (*Operator) WebhooksReady(context.Context, client.Client) error { return nil }

// SetupWithManager registers the BareMetalHost controller and the config
// drive server with mgr, whose scheme must know core/v1 and metal3.io
// (AddToScheme) and whose API server must serve the metal3 CRDs.
func (o *Operator) SetupWithManager(ctx context.Context, mgr ctrl.Manager) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.setUp {
		return errors.New("metal3: an Operator runs in one manager; make another with New")
	}
	r := newHostReconciler(mgr, o.opts, o.media)
	if err := r.setupWithManager(ctx, mgr); err != nil {
		return err
	}
	if err := mgr.Add(o.media); err != nil {
		return err
	}
	o.setUp = true
	return nil
}

// ConfigDriveURL is the base URL config drives are served from.
func (o *Operator) ConfigDriveURL() string { return o.media.url() }

// deployRamdiskPath names the lab's deploy ramdisk on the media server.
const deployRamdiskPath = "/images/ironic-python-agent.iso"

// DeployRamdiskURL names the lab's deploy ramdisk, for an
// ImageCustomization: the Deployer, which needs no image booted, so the
// URL answers 404 saying so.
func (o *Operator) DeployRamdiskURL() string { return o.media.url() + deployRamdiskPath }

// Close releases the config drive port of an Operator whose manager never
// started; once started, the manager's end closes it.
func (o *Operator) Close() error { return o.media.close() }
