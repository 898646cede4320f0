package lab

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	bmov1alpha1 "github.com/metal3-io/baremetal-operator/apis/metal3.io/v1alpha1"
	capm3v1beta1 "github.com/metal3-io/cluster-api-provider-metal3/api/v1beta1"
	machinev1beta1 "github.com/openshift/api/machine/v1beta1"
	hivev1 "github.com/openshift/hive/apis/hive/v1"

	"github.com/paritylab/paritylab/lab/capi"
	"github.com/paritylab/paritylab/lab/controllers"
	"github.com/paritylab/paritylab/lab/crds"
	"github.com/paritylab/paritylab/lab/hub/local"
	"github.com/paritylab/paritylab/lab/logs"
	"github.com/paritylab/paritylab/lab/process"
	agentv1beta1 "github.com/paritylab/paritylab/providers/thirdparty/agentinstall/v1beta1"
	hiveextv1beta1 "github.com/paritylab/paritylab/providers/thirdparty/hiveextensions/v1beta1"
)

func (l *Lab) startHub(ctx context.Context) error {
	l.hub = local.New(local.Options{
		Dir:     filepath.Join(l.opts.StateDir, "hub"),
		LogDir:  l.opts.LogDir,
		Tracker: l.ledger,
		Logger:  l.opts.Logger.WithName("hub"),
	})
	if err := l.hub.Create(ctx); err != nil {
		return err
	}
	kubeconfig, err := l.hub.Kubeconfig()
	if err != nil {
		return err
	}
	if err := os.WriteFile(l.KubeconfigPath(), kubeconfig, 0o600); err != nil {
		return fmt.Errorf("write hub kubeconfig: %w", err)
	}
	return errors.Join(
		l.ledger.SetValue(valueKubeconfig, l.KubeconfigPath()),
		l.ledger.SetValue(valueServer, l.hub.RESTConfig().Host),
	)
}

func (l *Lab) stopHub(ctx context.Context) error {
	if l.hub == nil {
		return nil
	}
	return l.hub.Dispose(ctx)
}

func (l *Lab) startControllers(ctx context.Context) error {
	logger, f, err := logs.File(filepath.Join(l.opts.LogDir, "hub-controllers.log"), 2)
	if err != nil {
		return err
	}
	logs.SetGlobal(logger)
	host, err := controllers.Start(ctx, controllers.Options{
		RESTConfig:  l.hub.RESTConfig(),
		WebhookHost: l.hub.WebhookHost(),
		CertDir:     filepath.Join(l.opts.StateDir, "webhook-certs"),
		Components:  hubComponents(),
		Logger:      logger,
	})
	if err != nil {
		f.Close()
		return err
	}
	l.controllers = host
	l.closeOnStop = append(l.closeOnStop, f)
	mgr := host.Manager()
	l.client, err = client.New(mgr.GetConfig(), client.Options{Scheme: mgr.GetScheme(), Mapper: mgr.GetRESTMapper()})
	if err != nil {
		return fmt.Errorf("create hub client: %w", err)
	}
	return nil
}

func (l *Lab) stopControllers(ctx context.Context) error {
	var errs []error
	if l.controllers != nil {
		errs = append(errs, l.controllers.Stop(ctx))
	}
	for _, c := range l.closeOnStop {
		errs = append(errs, c.Close())
	}
	l.closeOnStop = nil
	return errors.Join(errs...)
}

// hubComponents are what runs in process on a local hub. APIs whose
// controllers later issues add (metal3, machine API, hive, assisted service)
// are installed as CRDs now so the hub serves every type a scenario uses.
func hubComponents() []controllers.Component {
	return []controllers.Component{
		capi.New(capi.Options{}),
		&controllers.CRDsOnly{
			ComponentName: "infrastructure-apis",
			Sets:          []crds.Set{crds.MachineAPI(), crds.Metal3(), crds.CAPM3(), crds.Hive(), crds.Assisted()},
			Schemes: []func(*runtime.Scheme) error{
				machinev1beta1.Install, bmov1alpha1.AddToScheme, capm3v1beta1.AddToScheme,
				hivev1.AddToScheme, agentv1beta1.AddToScheme, hiveextv1beta1.AddToScheme,
			},
		},
	}
}

func encodeIdentity(id process.Identity) string {
	raw, _ := json.Marshal(id)
	return string(raw)
}

func decodeIdentity(s string) (process.Identity, error) {
	var id process.Identity
	if err := json.Unmarshal([]byte(s), &id); err != nil {
		return id, fmt.Errorf("decode owner identity: %w", err)
	}
	return id, nil
}
