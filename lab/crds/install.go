package crds

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"strconv"
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
	// envtest's installer drops the conversion of every kind the scheme
	// does not convert, so CRDs with their own conversion path go
	// through it without webhook options.
	var byScheme, ownPath []*apiextensionsv1.CustomResourceDefinition
	_, err := loadAll(in.Sets, func(s Set, crd *apiextensionsv1.CustomResourceDefinition) {
		if s.ConversionPath != "" && in.Conversion != nil {
			in.Conversion.set(crd, s.ConversionPath)
			ownPath = append(ownPath, crd)
			return
		}
		byScheme = append(byScheme, crd)
	})
	if err != nil {
		return err
	}
	if in.Timeout == 0 {
		in.Timeout = time.Minute
	}
	opts := envtest.CRDInstallOptions{
		Scheme:  in.Scheme,
		CRDs:    byScheme,
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
	if len(ownPath) > 0 {
		if _, err := envtest.InstallCRDs(cfg, envtest.CRDInstallOptions{CRDs: ownPath, MaxTime: in.Timeout}); err != nil {
			return fmt.Errorf("install CRDs: %w", err)
		}
	}
	return nil
}

// set makes the webhook at path convert a CRD that serves more than one
// version.
func (c *ConversionWebhook) set(crd *apiextensionsv1.CustomResourceDefinition, path string) {
	served := 0
	for _, v := range crd.Spec.Versions {
		if v.Served {
			served++
		}
	}
	if served < 2 {
		return
	}
	u := (&url.URL{Scheme: "https", Host: net.JoinHostPort(c.Host, strconv.Itoa(c.Port)), Path: path}).String()
	crd.Spec.Conversion = &apiextensionsv1.CustomResourceConversion{
		Strategy: apiextensionsv1.WebhookConverter,
		Webhook: &apiextensionsv1.WebhookConversion{
			ClientConfig:             &apiextensionsv1.WebhookClientConfig{URL: &u, CABundle: c.CABundle},
			ConversionReviewVersions: []string{"v1"},
		},
	}
}

// LoadAll loads every set and refuses two definitions of the same CRD.
func LoadAll(sets []Set) ([]*apiextensionsv1.CustomResourceDefinition, error) {
	return loadAll(sets, func(Set, *apiextensionsv1.CustomResourceDefinition) {})
}

// loadAll is LoadAll calling each for every CRD with its set.
func loadAll(sets []Set, each func(Set, *apiextensionsv1.CustomResourceDefinition)) ([]*apiextensionsv1.CustomResourceDefinition, error) {
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
			each(s, crd)
			all = append(all, crd)
		}
	}
	return all, errors.Join(errs...)
}
