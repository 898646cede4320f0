package capm3

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	capm3v1beta1 "github.com/metal3-io/cluster-api-provider-metal3/api/v1beta1"
	capm3v1beta2 "github.com/metal3-io/cluster-api-provider-metal3/api/v1beta2"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/paritylab/paritylab/lab/binaries"
	"github.com/paritylab/paritylab/lab/controllers"
	"github.com/paritylab/paritylab/lab/crds"
)

// AddToScheme registers both served versions of CAPM3's API; v1beta2 is
// the hub the other converts to.
func AddToScheme(s *runtime.Scheme) error {
	return errors.Join(capm3v1beta1.AddToScheme(s), capm3v1beta2.AddToScheme(s))
}

// installCRDs installs the module's CRDs, converting through the manager.
func installCRDs(opts Options, ep controllers.WebhookEndpoint) error {
	scheme := runtime.NewScheme()
	if err := AddToScheme(scheme); err != nil {
		return err
	}
	return crds.Install(opts.RESTConfig, crds.InstallInput{
		Sets:       []crds.Set{crds.CAPM3(binaries.CAPM3Version)},
		Scheme:     scheme,
		Conversion: &crds.ConversionWebhook{Host: ep.Host, Port: ep.Port, CABundle: ep.CABundle},
		Timeout:    opts.ReadyTimeout,
	})
}

// webhookManifests is the module's admission webhook configuration.
const webhookManifests = "config/webhook/manifests.yaml"

// installWebhooks points the module's webhook configurations at the
// manager and waits until the API server calls them.
func installWebhooks(ctx context.Context, opts Options, ep controllers.WebhookEndpoint) error {
	dir, err := crds.ModuleDirAt(crds.CAPM3Module, binaries.CAPM3Version)
	if err != nil {
		return err
	}
	cfgs, err := controllers.ReadWebhookManifests(filepath.Join(dir, webhookManifests))
	if err != nil {
		return err
	}
	if err := cfgs.ServeFrom(ep, ComponentName); err != nil {
		return err
	}
	scheme := runtime.NewScheme()
	if err := errors.Join(AddToScheme(scheme), clientgoscheme.AddToScheme(scheme)); err != nil {
		return err
	}
	c, err := client.New(opts.RESTConfig, client.Options{Scheme: scheme})
	if err != nil {
		return fmt.Errorf("capm3 webhook client: %w", err)
	}
	if err := cfgs.Apply(ctx, c); err != nil {
		return err
	}
	err = wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, opts.ReadyTimeout, true, func(ctx context.Context) (bool, error) {
		return WebhooksReady(ctx, c) == nil, nil
	})
	if err != nil {
		return fmt.Errorf("capm3 webhooks not called by the API server: %w", errors.Join(err, WebhooksReady(ctx, c)))
	}
	return nil
}

// WebhooksReady proves the API server calls CAPM3's webhooks: a dry-run
// Metal3Cluster comes back with the port only the defaulting webhook sets,
// and one without a control-plane host is refused by the validating one.
func WebhooksReady(ctx context.Context, c client.Client) error {
	probe := &capm3v1beta2.Metal3Cluster{ObjectMeta: metav1.ObjectMeta{Name: "paritylab-webhook-probe", Namespace: metav1.NamespaceDefault},
		Spec: capm3v1beta2.Metal3ClusterSpec{ControlPlaneEndpoint: capm3v1beta2.APIEndpoint{Host: "probe.invalid"}}}
	if err := c.Create(ctx, probe, client.DryRunAll); err != nil {
		return fmt.Errorf("dry-run Metal3Cluster: %w", err)
	}
	if probe.Spec.ControlPlaneEndpoint.Port == 0 {
		return errors.New("Metal3Cluster defaulting webhook not called yet")
	}
	bad := &capm3v1beta2.Metal3Cluster{ObjectMeta: metav1.ObjectMeta{Name: "paritylab-webhook-probe", Namespace: metav1.NamespaceDefault}}
	err := c.Create(ctx, bad, client.DryRunAll)
	if err == nil {
		return errors.New("Metal3Cluster validating webhook not called yet")
	}
	if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "controlPlaneEndpoint") {
		return fmt.Errorf("Metal3Cluster validating webhook answered unexpectedly: %w", err)
	}
	return nil
}
