package controllers

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"

	"github.com/paritylab/paritylab/lab/crds"
)

const testManifests = `---
apiVersion: admissionregistration.k8s.io/v1
kind: MutatingWebhookConfiguration
metadata:
  name: mutating-webhook-configuration
webhooks:
- admissionReviewVersions:
  - v1
  clientConfig:
    service:
      name: webhook-service
      namespace: system
      path: /mutate-example-com-v1-widget
  failurePolicy: Fail
  name: default.widget.example.com
  rules:
  - apiGroups:
    - example.com
    apiVersions:
    - v1
    operations:
    - CREATE
    - UPDATE
    resources:
    - widgets
  sideEffects: None
---
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata:
  name: validating-webhook-configuration
webhooks:
- admissionReviewVersions:
  - v1
  clientConfig:
    service:
      name: webhook-service
      namespace: system
      path: /validate-example-com-v1-widget
  failurePolicy: Fail
  name: validation.widget.example.com
  rules:
  - apiGroups:
    - example.com
    apiVersions:
    - v1
    operations:
    - CREATE
    resources:
    - widgets
  sideEffects: None
- admissionReviewVersions:
  - v1
  clientConfig:
    service:
      name: webhook-service
      namespace: system
      path: validate-example-com-v1-gadget
  name: validation.gadget.example.com
  sideEffects: None
`

func TestParseWebhookManifests(t *testing.T) {
	got, err := ParseWebhookManifests([]byte(testManifests))
	if err != nil {
		t.Fatalf("ParseWebhookManifests: %v", err)
	}
	if len(got.Mutating) != 1 || len(got.Validating) != 1 {
		t.Fatalf("got %d mutating and %d validating configurations, want 1 and 1", len(got.Mutating), len(got.Validating))
	}
	m := got.Mutating[0]
	if m.Name != "mutating-webhook-configuration" || len(m.Webhooks) != 1 || m.Webhooks[0].Name != "default.widget.example.com" {
		t.Errorf("mutating configuration decoded as %+v", m)
	}
	if p := m.Webhooks[0].ClientConfig.Service; p == nil || p.Path == nil || *p.Path != "/mutate-example-com-v1-widget" {
		t.Errorf("mutating webhook service = %+v", p)
	}
	v := got.Validating[0]
	if v.Name != "validating-webhook-configuration" || len(v.Webhooks) != 2 {
		t.Errorf("validating configuration decoded as %+v", v)
	}
}

func TestParseWebhookManifestsErrors(t *testing.T) {
	cases := []struct {
		name string
		yaml string
		want string
	}{
		{
			name: "unknown kind",
			yaml: "apiVersion: v1\nkind: Service\nmetadata:\n  name: webhook-service\n",
			want: `unexpected kind "Service"`,
		},
		{
			name: "unknown field",
			yaml: "apiVersion: admissionregistration.k8s.io/v1\nkind: ValidatingWebhookConfiguration\nmetadata:\n  name: v\nbogus: true\n",
			want: "bogus",
		},
		{
			name: "malformed",
			yaml: "kind: [unclosed\n",
			want: "decode webhook manifest",
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := ParseWebhookManifests([]byte(c.yaml))
			if err == nil {
				t.Fatalf("got %+v and no error", got)
			}
			if !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %q does not contain %q", err, c.want)
			}
		})
	}
}

func TestParseWebhookManifestsEmpty(t *testing.T) {
	got, err := ParseWebhookManifests([]byte("---\n---\n"))
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Mutating) != 0 || len(got.Validating) != 0 {
		t.Fatalf("got %+v from empty documents", got)
	}
}

func TestEndpointURL(t *testing.T) {
	cases := []struct {
		ep   WebhookEndpoint
		path string
		want string
	}{
		{WebhookEndpoint{Host: "127.0.0.1", Port: 9443}, "/validate", "https://127.0.0.1:9443/validate"},
		{WebhookEndpoint{Host: "10.0.0.2", Port: 443}, "mutate-x", "https://10.0.0.2:443/mutate-x"},
		{WebhookEndpoint{Host: "::1", Port: 8443}, "/v", "https://[::1]:8443/v"},
		{WebhookEndpoint{Host: "host.docker.internal", Port: 1}, "/", "https://host.docker.internal:1/"},
	}
	for _, c := range cases {
		if got := c.ep.url(c.path); got != c.want {
			t.Errorf("url(%q) on %+v = %q, want %q", c.path, c.ep, got, c.want)
		}
	}
}

func TestPointAt(t *testing.T) {
	cfgs, err := ParseWebhookManifests([]byte(testManifests))
	if err != nil {
		t.Fatal(err)
	}
	ca := []byte("-----BEGIN CERTIFICATE-----\nfake\n-----END CERTIFICATE-----\n")
	ep := WebhookEndpoint{Host: "192.168.1.10", Port: 9443, CABundle: ca}
	if err := cfgs.pointAt(ep, "capi"); err != nil {
		t.Fatalf("pointAt: %v", err)
	}
	if got := cfgs.Mutating[0].Name; got != "capi-mutating-webhook-configuration" {
		t.Errorf("mutating configuration name = %q", got)
	}
	if got := cfgs.Validating[0].Name; got != "capi-validating-webhook-configuration" {
		t.Errorf("validating configuration name = %q", got)
	}
	check := func(name string, cc admissionregistrationv1.WebhookClientConfig, wantURL string) {
		t.Helper()
		if cc.Service != nil {
			t.Errorf("webhook %s still has a service: %+v", name, cc.Service)
		}
		if cc.URL == nil || *cc.URL != wantURL {
			t.Errorf("webhook %s URL = %v, want %q", name, cc.URL, wantURL)
		}
		if !bytes.Equal(cc.CABundle, ca) {
			t.Errorf("webhook %s CA bundle = %q", name, cc.CABundle)
		}
	}
	check("mutating", cfgs.Mutating[0].Webhooks[0].ClientConfig, "https://192.168.1.10:9443/mutate-example-com-v1-widget")
	check("validating widget", cfgs.Validating[0].Webhooks[0].ClientConfig, "https://192.168.1.10:9443/validate-example-com-v1-widget")
	check("validating gadget", cfgs.Validating[0].Webhooks[1].ClientConfig, "https://192.168.1.10:9443/validate-example-com-v1-gadget")
}

func TestPointAtWithoutServicePath(t *testing.T) {
	url := "https://elsewhere.example.com/validate"
	cases := []struct {
		name string
		cfgs *WebhookConfigurations
	}{
		{
			name: "validating with URL",
			cfgs: &WebhookConfigurations{Validating: []admissionregistrationv1.ValidatingWebhookConfiguration{{
				Webhooks: []admissionregistrationv1.ValidatingWebhook{{
					Name:         "broken.example.com",
					ClientConfig: admissionregistrationv1.WebhookClientConfig{URL: &url},
				}},
			}}},
		},
		{
			name: "mutating service without path",
			cfgs: &WebhookConfigurations{Mutating: []admissionregistrationv1.MutatingWebhookConfiguration{{
				Webhooks: []admissionregistrationv1.MutatingWebhook{{
					Name: "broken.example.com",
					ClientConfig: admissionregistrationv1.WebhookClientConfig{
						Service: &admissionregistrationv1.ServiceReference{Name: "svc", Namespace: "system"},
					},
				}},
			}}},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := c.cfgs.pointAt(WebhookEndpoint{Host: "127.0.0.1", Port: 1}, "x")
			if err == nil || !strings.Contains(err.Error(), "broken.example.com") {
				t.Fatalf("pointAt error = %v, want one naming the webhook", err)
			}
		})
	}
}

func TestReadWebhookManifestsClusterAPI(t *testing.T) {
	dir, err := crds.ModuleDir("sigs.k8s.io/cluster-api")
	if err != nil {
		t.Fatal(err)
	}
	cfgs, err := ReadWebhookManifests(filepath.Join(dir, "config", "webhook", "manifests.yaml"))
	if err != nil {
		t.Fatalf("ReadWebhookManifests: %v", err)
	}
	if len(cfgs.Mutating) == 0 || len(cfgs.Validating) == 0 {
		t.Fatalf("got %d mutating and %d validating configurations, want both kinds", len(cfgs.Mutating), len(cfgs.Validating))
	}
	n := 0
	for _, c := range cfgs.Mutating {
		n += len(c.Webhooks)
	}
	for _, c := range cfgs.Validating {
		n += len(c.Webhooks)
	}
	if n <= 10 {
		t.Fatalf("Cluster API manifests hold %d webhooks, want more than 10", n)
	}
	// Every generated webhook must be servable by this process.
	if err := cfgs.pointAt(WebhookEndpoint{Host: "127.0.0.1", Port: 9443, CABundle: []byte("ca")}, "capi"); err != nil {
		t.Fatalf("pointAt on Cluster API webhooks: %v", err)
	}
}

func TestReadWebhookManifestsMissingFile(t *testing.T) {
	_, err := ReadWebhookManifests(filepath.Join(t.TempDir(), "missing.yaml"))
	if err == nil || !strings.Contains(err.Error(), "read webhook manifests") {
		t.Fatalf("error = %v, want a read error", err)
	}
}
