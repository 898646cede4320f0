package crds

import (
	"errors"
	"fmt"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

// ConversionWebhook is where the API server calls conversion webhooks.
type ConversionWebhook struct {
	Host     string
	Port     int
	CABundle []byte
}

// InstallInput says what to install.
type InstallInput struct {
	// Sets of CRDs to install.
	Sets []Set
	// Scheme decides which CRDs get a conversion webhook: those whose kind
	// has a hub version and convertible spokes in it.
	Scheme *runtime.Scheme
	// Conversion, when set, is the conversion webhook for those CRDs;
	// without it conversion strategies are left as the manifests say.
	Conversion *ConversionWebhook
	// Timeout bounds the wait for every CRD to be served. Default 1m.
	Timeout time.Duration
}

// Install creates (or updates) every CRD of the sets and waits until the API
// server serves all their versions.
func Install(cfg *rest.Config, in InstallInput) error {
	all, err := LoadAll(in.Sets)
	if err != nil {
		return err
	}
	if in.Timeout == 0 {
		in.Timeout = time.Minute
	}
	opts := envtest.CRDInstallOptions{
		Scheme:  in.Scheme,
		CRDs:    all,
		MaxTime: in.Timeout,
	}
	if c := in.Conversion; c != nil {
		opts.WebhookOptions = envtest.WebhookInstallOptions{
			LocalServingHost:   c.Host,
			LocalServingPort:   c.Port,
			LocalServingCAData: c.CABundle,
		}
	}
	if _, err := envtest.InstallCRDs(cfg, opts); err != nil {
		return fmt.Errorf("install CRDs: %w", err)
	}
	return nil
}

// LoadAll loads every set and refuses two definitions of the same CRD.
func LoadAll(sets []Set) ([]*apiextensionsv1.CustomResourceDefinition, error) {
	var all []*apiextensionsv1.CustomResourceDefinition
	seen := map[string]string{}
	var errs []error
	for _, s := range sets {
		loaded, err := s.Load()
		if err != nil {
			errs = append(errs, err)
			continue
		}
		for _, crd := range loaded {
			if other, dup := seen[crd.Name]; dup {
				errs = append(errs, fmt.Errorf("CRD %s is defined by both %s and %s", crd.Name, other, s.Name))
				continue
			}
			seen[crd.Name] = s.Name
			all = append(all, crd)
		}
	}
	return all, errors.Join(errs...)
}
