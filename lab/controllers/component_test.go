package controllers

import (
	"context"
	"errors"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"

	"github.com/paritylab/paritylab/lab/crds"
)

func TestCRDsOnly(t *testing.T) {
	sets := []crds.Set{crds.Metal3(), crds.Hive()}
	var calls int
	c := &CRDsOnly{
		ComponentName: "infrastructure-apis",
		Sets:          sets,
		Schemes: []func(*runtime.Scheme) error{
			corev1.AddToScheme,
			func(*runtime.Scheme) error { calls++; return nil },
		},
	}
	if c.Name() != "infrastructure-apis" {
		t.Errorf("Name = %q", c.Name())
	}
	got := c.CRDs()
	if len(got) != 2 || got[0].Name != sets[0].Name || got[1].Name != sets[1].Name {
		t.Errorf("CRDs = %+v, want the component's sets", got)
	}
	s := runtime.NewScheme()
	if err := c.AddToScheme(s); err != nil {
		t.Fatalf("AddToScheme: %v", err)
	}
	if calls != 1 {
		t.Errorf("second scheme func called %d times, want 1", calls)
	}
	if !s.Recognizes(corev1.SchemeGroupVersion.WithKind("Pod")) {
		t.Error("scheme does not know core/v1 Pod after AddToScheme")
	}
	w, err := c.Webhooks()
	if w != nil || err != nil {
		t.Errorf("Webhooks = %+v, %v; want none", w, err)
	}
	if err := c.SetupWithManager(context.Background(), nil); err != nil {
		t.Errorf("SetupWithManager: %v", err)
	}
	if err := c.WebhooksReady(context.Background(), nil); err != nil {
		t.Errorf("WebhooksReady: %v", err)
	}
}

func TestCRDsOnlyAddToSchemeError(t *testing.T) {
	boom := errors.New("boom")
	var later bool
	c := &CRDsOnly{Schemes: []func(*runtime.Scheme) error{
		func(*runtime.Scheme) error { return boom },
		func(*runtime.Scheme) error { later = true; return nil },
	}}
	if err := c.AddToScheme(runtime.NewScheme()); !errors.Is(err, boom) {
		t.Fatalf("AddToScheme error = %v, want %v", err, boom)
	}
	if later {
		t.Error("AddToScheme went on after an error")
	}
}

func TestOptionsDefaults(t *testing.T) {
	cases := []struct {
		name string
		opts Options
		ok   bool
	}{
		{name: "no rest config", opts: Options{WebhookHost: "127.0.0.1", CertDir: "/tmp/x"}},
		{name: "no webhook host", opts: Options{RESTConfig: restConfig(), CertDir: "/tmp/x"}},
		{name: "no cert dir", opts: Options{RESTConfig: restConfig(), WebhookHost: "127.0.0.1"}},
		{name: "complete", opts: Options{RESTConfig: restConfig(), WebhookHost: "127.0.0.1", CertDir: "/tmp/x"}, ok: true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := c.opts.defaults()
			if (err == nil) != c.ok {
				t.Fatalf("defaults() = %v, want ok=%v", err, c.ok)
			}
			if c.ok && c.opts.ReadyTimeout != 2*time.Minute {
				t.Errorf("defaults left ReadyTimeout=%v, want 2m", c.opts.ReadyTimeout)
			}
		})
	}
}

func restConfig() *rest.Config { return &rest.Config{Host: "https://127.0.0.1:1"} }
