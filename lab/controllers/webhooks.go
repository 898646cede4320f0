package controllers

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"strings"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"
)

// ReadWebhookManifests reads admission webhook configurations from a
// (multi-document) YAML file, as controller-gen writes them.
func ReadWebhookManifests(path string) (*WebhookConfigurations, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read webhook manifests: %w", err)
	}
	return ParseWebhookManifests(raw)
}

// ParseWebhookManifests decodes admission webhook configurations.
func ParseWebhookManifests(raw []byte) (*WebhookConfigurations, error) {
	out := &WebhookConfigurations{}
	reader := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(raw)))
	for {
		doc, err := reader.Read()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, fmt.Errorf("split webhook manifests: %w", err)
		}
		if err := out.add(doc); err != nil {
			return nil, err
		}
	}
}

func (w *WebhookConfigurations) add(doc []byte) error {
	var meta struct{ Kind string }
	if err := yaml.Unmarshal(doc, &meta); err != nil {
		return fmt.Errorf("decode webhook manifest: %w", err)
	}
	switch meta.Kind {
	case "MutatingWebhookConfiguration":
		var c admissionregistrationv1.MutatingWebhookConfiguration
		if err := yaml.UnmarshalStrict(doc, &c); err != nil {
			return fmt.Errorf("decode mutating webhook configuration: %w", err)
		}
		w.Mutating = append(w.Mutating, c)
	case "ValidatingWebhookConfiguration":
		var c admissionregistrationv1.ValidatingWebhookConfiguration
		if err := yaml.UnmarshalStrict(doc, &c); err != nil {
			return fmt.Errorf("decode validating webhook configuration: %w", err)
		}
		w.Validating = append(w.Validating, c)
	case "":
		// empty document
	default:
		return fmt.Errorf("unexpected kind %q in webhook manifests", meta.Kind)
	}
	return nil
}

// WebhookEndpoint is where the hub API server reaches a webhook server, and
// the CA bundle it trusts the server's certificate by.
type WebhookEndpoint struct {
	Host     string
	Port     int
	CABundle []byte
}

func (e WebhookEndpoint) url(path string) string {
	if !strings.HasPrefix(path, "/") {
		path = "/" + path
	}
	return "https://" + net.JoinHostPort(e.Host, strconv.Itoa(e.Port)) + path
}

// pointAt rewrites Service client configs to URLs of the host's server and
// sets the CA bundle; configuration names get the component as prefix, since
// generated names ("validating-webhook-configuration") are the same for
// every kubebuilder project.
func (w *WebhookConfigurations) pointAt(e WebhookEndpoint, prefix string) error {
	for i := range w.Mutating {
		c := &w.Mutating[i]
		c.Name = prefix + "-" + c.Name
		for j := range c.Webhooks {
			if err := e.rewrite(&c.Webhooks[j].ClientConfig, c.Webhooks[j].Name); err != nil {
				return err
			}
		}
	}
	for i := range w.Validating {
		c := &w.Validating[i]
		c.Name = prefix + "-" + c.Name
		for j := range c.Webhooks {
			if err := e.rewrite(&c.Webhooks[j].ClientConfig, c.Webhooks[j].Name); err != nil {
				return err
			}
		}
	}
	return nil
}

func (e WebhookEndpoint) rewrite(cc *admissionregistrationv1.WebhookClientConfig, name string) error {
	if cc.Service == nil || cc.Service.Path == nil {
		return fmt.Errorf("webhook %s: client config has no service path to serve", name)
	}
	u := e.url(*cc.Service.Path)
	cc.URL, cc.Service, cc.CABundle = &u, nil, e.CABundle
	return nil
}

// apply creates or replaces every configuration.
func (w *WebhookConfigurations) apply(ctx context.Context, c client.Client) error {
	for i := range w.Mutating {
		if err := createOrReplace(ctx, c, &w.Mutating[i], &admissionregistrationv1.MutatingWebhookConfiguration{}); err != nil {
			return err
		}
	}
	for i := range w.Validating {
		if err := createOrReplace(ctx, c, &w.Validating[i], &admissionregistrationv1.ValidatingWebhookConfiguration{}); err != nil {
			return err
		}
	}
	return nil
}

func createOrReplace(ctx context.Context, c client.Client, obj, existing client.Object) error {
	err := c.Create(ctx, obj)
	if !apierrors.IsAlreadyExists(err) {
		if err != nil {
			return fmt.Errorf("create webhook configuration %s: %w", obj.GetName(), err)
		}
		return nil
	}
	if err := c.Get(ctx, client.ObjectKeyFromObject(obj), existing); err != nil {
		return fmt.Errorf("get webhook configuration %s: %w", obj.GetName(), err)
	}
	obj.SetResourceVersion(existing.GetResourceVersion())
	if err := c.Update(ctx, obj); err != nil {
		return fmt.Errorf("replace webhook configuration %s: %w", obj.GetName(), err)
	}
	return nil
}

// ServeFrom points every configuration at the webhook server at e (another
// process's, e.g. an upstream provider manager); configuration names get
// prefix, as a host's components do.
func (w *WebhookConfigurations) ServeFrom(e WebhookEndpoint, prefix string) error {
	return w.pointAt(e, prefix)
}

// Apply creates or replaces every configuration.
func (w *WebhookConfigurations) Apply(ctx context.Context, c client.Client) error {
	return w.apply(ctx, c)
}
